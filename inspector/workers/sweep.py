"""Reading a sweep's per-request rows in the background: the requests of one histogram bucket."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QThread, Signal

import core

MAX_LISTED = 500


class BucketThread(QThread):
    """Lists the requests of bucket ``bucket`` of ``histogram`` under setting ``setting``."""

    listed = Signal(int, str, int, list)  # setting, histogram, bucket, [BucketMember]
    failed = Signal(str)

    def __init__(self, path: str, sweep: dict[str, Any], setting: int, histogram: str, bucket: int, parent=None):
        super().__init__(parent)
        self.path, self.sweep = path, sweep
        self.setting, self.histogram, self.bucket = setting, histogram, bucket

    def run(self) -> None:
        try:
            members = core.bucket_members(self.path, self.sweep, self.setting, self.histogram, self.bucket,
                                          limit=MAX_LISTED)
        except (core.ContextInspectorError, OSError, ValueError) as exc:
            self.failed.emit(str(exc))
            return
        self.listed.emit(self.setting, self.histogram, self.bucket, members)
