"""Packaging: what the wheel carries and where the app finds it, the icon, the desktop files, and (slow) the
built wheel installed into a fresh virtual environment and run from outside the repository."""
from __future__ import annotations

import configparser
import fnmatch
import json
import os
import shutil
import struct
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before anything imports Qt

import pytest  # noqa: E402

from inspector import paths  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
VERSION = PYPROJECT["project"]["version"]
LINUX = ROOT / "packaging" / "linux"
DESKTOP_FILE = LINUX / f"{paths.APP_ID}.desktop"
METAINFO_FILE = LINUX / f"{paths.APP_ID}.metainfo.xml"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (no image library needed)."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def shipped_package(folder: Path) -> str | None:
    """The installed package a repository folder maps to, through pyproject's package-dir (None: not shipped)."""
    for package, source in SETUPTOOLS["package-dir"].items():
        source_dir = ROOT / source
        if folder == source_dir or source_dir in folder.parents:
            return ".".join([package, *folder.relative_to(source_dir).parts])
    return None


def is_shipped(path: Path) -> bool:
    package = shipped_package(path.parent)
    return package is not None and any(fnmatch.fnmatch(path.name, pattern)
                                       for pattern in SETUPTOOLS["package-data"].get(package, []))


# ---- the wheel's package list and data mapping


def test_every_code_package_is_in_the_explicit_package_list():
    found = {".".join(init.parent.relative_to(ROOT).parts)
             for top in ("core", "inspector") for init in (ROOT / top).rglob("__init__.py")
             if "__pycache__" not in init.parts}
    missing = sorted(found - set(SETUPTOOLS["packages"]))
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml, or the wheel leaves them out"


def test_every_fixture_and_icon_the_app_can_open_is_shipped():
    data_files = [p for top in ("fixtures", "resources/icons") for p in (ROOT / top).rglob("*")
                  if p.is_file() and p.suffix in {".json", ".jsonl", ".yaml", ".svg", ".png"}
                  and "__pycache__" not in p.parts]
    assert data_files
    for path in data_files:
        package = shipped_package(path.parent)
        assert package in SETUPTOOLS["packages"], (
            f"{path.relative_to(ROOT)}: its folder maps to {package}, which is not in pyproject's packages list")
        assert is_shipped(path), f"{path.relative_to(ROOT)}: no package-data glob of {package} matches it"


def test_screenshots_stay_out_of_the_wheel():
    shots = list((ROOT / "resources" / "screenshots").glob("*.png"))
    assert shots and not any(is_shipped(p) for p in shots)


def test_build_tools_are_an_extra_not_a_runtime_dependency():
    runtime = " ".join(PYPROJECT["project"]["dependencies"]).lower()
    assert "pyinstaller" not in runtime and "build" not in runtime
    assert any(r.startswith("pyinstaller") for r in PYPROJECT["project"]["optional-dependencies"]["build"])


# ---- inspector/paths.py


def test_a_checkout_finds_the_top_level_folders():
    assert paths.fixtures_dir() == ROOT / "fixtures"
    assert paths.resources_dir() == ROOT / "resources"
    assert paths.demo_request_path().is_file()
    assert [p.name for p in paths.app_icon_files()] == [f"context-inspector-{n}.png" for n in paths.ICON_SIZES]
    assert paths.app_icon_svg().is_file()


class _FakeResources:
    """Stands in for importlib.resources: ``files("inspector")`` is a chosen folder."""

    def __init__(self, package_dir: Path) -> None:
        self.package_dir = package_dir

    def files(self, package: str) -> Path:
        assert package == "inspector"
        return self.package_dir


def test_an_install_uses_the_data_inside_the_package(tmp_path, monkeypatch):
    installed = tmp_path / "site-packages" / "inspector"
    (installed / "_data" / "fixtures").mkdir(parents=True)
    (installed / "_data" / "resources" / "icons").mkdir(parents=True)
    (installed / "_data" / "resources" / "icons" / "context-inspector-16.png").write_bytes(PNG_SIGNATURE)
    monkeypatch.setattr(paths, "resources", _FakeResources(installed))
    assert paths.fixtures_dir() == installed / "_data" / "fixtures"
    assert paths.demo_request_path() == installed / "_data" / "fixtures" / "demo.request.json"
    assert paths.app_icon_files() == [installed / "_data" / "resources" / "icons" / "context-inspector-16.png"]


def test_a_broken_install_names_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "resources", _FakeResources(tmp_path / "site-packages" / "inspector"))
    monkeypatch.setattr(paths, "_checkout", lambda kind: tmp_path / "checkout" / kind)
    with pytest.raises(paths.BundledDataMissing) as caught:
        paths.fixtures_dir()
    message = str(caught.value)
    assert "fixtures" in message and str(tmp_path / "site-packages" / "inspector" / "_data" / "fixtures") in message
    assert str(tmp_path / "checkout" / "fixtures") in message and "reinstall" in message


# ---- the icon


def test_icon_pngs_have_every_desktop_size():
    for size in paths.ICON_SIZES:
        assert png_size(ROOT / "resources" / "icons" / f"context-inspector-{size}.png") == (size, size)


def test_icon_pngs_are_rendered_from_the_svg():
    done = subprocess.run([sys.executable, str(ROOT / "packaging" / "render_icons.py"), "--check"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr


def test_the_app_uses_the_icon_as_its_window_icon(qapp):
    from inspector import app as inspector_app

    app = inspector_app._make_app()
    icon = app.windowIcon()
    assert not icon.isNull()
    assert {s.width() for s in icon.availableSizes()} >= set(paths.ICON_SIZES)
    assert app.desktopFileName() == paths.APP_ID


# ---- desktop entry and AppStream metainfo


def test_desktop_entry_names_our_command_and_icon():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # keys are case-sensitive
    entry.read(DESKTOP_FILE, encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Type"] == "Application" and section["Name"] == "Context Inspector"
    assert section["Exec"].split()[0] == "context-inspector" in PYPROJECT["project"]["gui-scripts"]
    assert section["Icon"] == paths.APP_ID


def test_metainfo_matches_the_package():
    root = ET.parse(METAINFO_FILE).getroot()
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == paths.APP_ID
    assert root.findtext("launchable") == DESKTOP_FILE.name
    assert root.findtext("project_license") == PYPROJECT["project"]["license"]
    commands = {*PYPROJECT["project"]["scripts"], *PYPROJECT["project"]["gui-scripts"]}
    assert {b.text for b in root.iter("binary")} == commands
    newest = root.find("releases/release")
    assert newest is not None and newest.get("version") == VERSION, (
        f"add <release version=\"{VERSION}\"> at the top of {METAINFO_FILE.name}'s <releases>")


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstreamcli is not installed (Debian: appstream)")
def test_metainfo_passes_appstreamcli():
    done = subprocess.run(["appstreamcli", "validate", "--no-net", "--strict", str(METAINFO_FILE)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None,
                    reason="desktop-file-validate is not installed (Debian: desktop-file-utils)")
def test_desktop_entry_passes_desktop_file_validate():
    done = subprocess.run(["desktop-file-validate", str(DESKTOP_FILE)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


# ---- the standalone application leaves transformers out


def test_an_hf_counter_without_transformers_says_so(tmp_path, monkeypatch):
    import core
    from core.errors import CounterError

    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers -> ImportError
    with pytest.raises(CounterError, match="need the 'transformers' package"):
        core.make_counter(f"hf:{tmp_path}")


# ---- slow: the built wheel in a fresh virtual environment

# What a wheel is built from: the files pyproject.toml and its package-data read (a copy, so the build never
# writes into the checkout and no stale build/ folder can leak into the wheel).
SOURCE_ENTRIES = ("pyproject.toml", "README.md", "core", "inspector", "fixtures", "resources")


def _run(command: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.slow
def test_the_wheel_installs_into_a_fresh_venv_and_runs_from_anywhere(tmp_path):
    # Build: pip wheel from a copy of the sources (setuptools comes from pip's cache or the index).
    source = tmp_path / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCE_ENTRIES:
        item = ROOT / name
        if item.is_dir():
            shutil.copytree(item, source / name, ignore=ignore)
        else:
            shutil.copy2(item, source / name)
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    env.update(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"), PIP_NO_INPUT="1")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(tmp_path / "wheels"),
          str(source)], cwd=tmp_path, env=env, timeout=300)
    wheels = list((tmp_path / "wheels").glob("context_inspector-*.whl"))
    assert len(wheels) == 1

    # Install: a truly fresh venv and a plain `pip install` of the wheel with its dependencies, as a colleague
    # would (pip's cache, filled by the project's own set-up, makes it ~20 s here).
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path, env=env, timeout=120)
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    _run([str(python), "-m", "pip", "install", "--quiet", str(wheels[0])], cwd=tmp_path, env=env, timeout=600)

    # Run from the temporary folder: nothing may come from the repository.
    where = _run([str(python), "-c", "import core, inspector.paths as p; print(core.__file__); "
                  "print(p.fixtures_dir()); print(p.resources_dir())"], cwd=tmp_path, env=env, timeout=60)
    for line in where.stdout.split():
        assert Path(line).is_relative_to(venv), f"{line} is not inside the fresh venv"
    fixtures = Path(where.stdout.split()[1])

    version = _run([str(bin_dir / "context-inspector"), "--version"], cwd=tmp_path, env=env, timeout=60)
    assert version.stdout.strip() == f"context-inspector {VERSION}"

    shot = tmp_path / "demo.png"
    _run([str(bin_dir / "context-inspector"), "--demo", "--screenshot", str(shot)], cwd=tmp_path, env=env, timeout=180)
    assert shot.stat().st_size > 10_000 and png_size(shot) == (1600, 1000)

    assembled = _run([str(bin_dir / "context-assembler"), "assemble", str(fixtures / "rag_tight.request.json")],
                     cwd=tmp_path, env=env, timeout=120)
    result = json.loads(assembled.stdout)
    recorded = json.loads((ROOT / "fixtures" / "rag_tight.result.json").read_text(encoding="utf-8"))
    assert result == recorded  # the installed assembler gives the recorded result
