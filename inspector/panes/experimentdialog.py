"""Asks what a live experiment needs: the endpoint (contacted only when the person presses Run), the
model, the API kind, the environment variable holding a key (never the key itself), the variants,
the number of seeds and a new answers file to write."""
from __future__ import annotations

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel,
                               QLineEdit, QPushButton, QSpinBox, QWidget)


class ExperimentDialog(QDialog):
    def __init__(self, request_label: str, default_output: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Run Experiment")
        self.endpoint = QLineEdit("http://127.0.0.1:8080", self)
        self.model = QLineEdit(self)
        self.model.setPlaceholderText("the model name the server knows")
        self.api = QComboBox(self)
        self.api.addItems(["openai", "ollama"])
        self.key_env = QLineEdit(self)
        self.key_env.setPlaceholderText("e.g. OPENAI_API_KEY (the variable's name, not the key)")
        self.variants = QLineEdit("default,evidence-first,baseline", self)
        self.variants.setToolTip("default, evidence-first, history-first, baseline, plan, limit=N, position=K, "
                                 "positions")
        self.relevant = QLineEdit(self)
        self.relevant.setPlaceholderText("passage id the position test moves")
        self.seeds = QSpinBox(self)
        self.seeds.setRange(1, 100)
        self.seeds.setValue(5)
        self.output = QLineEdit(default_output, self)
        browse = QPushButton("…", self)
        browse.clicked.connect(self._browse)
        out_row = QHBoxLayout()
        out_row.addWidget(self.output, 1)
        out_row.addWidget(browse)
        form = QFormLayout(self)
        form.addRow(QLabel(f"Request: {request_label}", self))
        form.addRow("Endpoint URL", self.endpoint)
        form.addRow("Model", self.model)
        form.addRow("API", self.api)
        form.addRow("Key from variable", self.key_env)
        form.addRow("Variants", self.variants)
        form.addRow("Relevant passage", self.relevant)
        form.addRow("Seeds", self.seeds)
        form.addRow("Answers file", out_row)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        buttons.addButton("Run", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Answers file", self.output.text(), "Answers (*.answers.jsonl)")
        if path:
            self.output.setText(path)

    def values(self) -> dict:
        return {"endpoint": self.endpoint.text().strip(), "model": self.model.text().strip(),
                "api": self.api.currentText(), "api_key_env": self.key_env.text().strip() or None,
                "variants": [v for v in self.variants.text().split(",") if v.strip()],
                "relevant": self.relevant.text().strip() or None, "seeds": self.seeds.value(),
                "output": self.output.text().strip()}
