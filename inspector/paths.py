"""Where the bundled files live. One place, so packaging can move them without touching the GUI.

Two layouts, looked up in this order:

- an installed wheel or the PyInstaller folder: ``inspector/_data/fixtures`` and ``inspector/_data/resources``
  inside the package (``pyproject.toml`` maps the repository's top-level folders there when it builds);
- a source checkout (the editable install of ``make demo`` / ``make test``): ``fixtures/`` and
  ``resources/`` beside the package, at the repository's top level.

Nothing here imports Qt: the paths are plain ``pathlib.Path`` objects the GUI opens as files.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

APP_ID = "io.github.context_inspector.ContextInspector"  # the .desktop file and AppStream metainfo name
ICON_NAME = "context-inspector"
ICON_SIZES = (16, 32, 48, 64, 128, 256)


class BundledDataMissing(FileNotFoundError):
    """Neither the installed package nor a source checkout has the folder (a broken install)."""

    def __init__(self, kind: str, looked_in: list[Path]) -> None:
        self.kind = kind
        self.looked_in = looked_in
        places = " or ".join(str(p) for p in looked_in)
        super().__init__(f"the bundled {kind} folder is missing: looked in {places} "
                         "(reinstall context-inspector, or run from a complete source checkout)")


def _installed(kind: str) -> Path | None:
    """``inspector/_data/<kind>`` inside the installed package, when the install has it on disk."""
    packaged = resources.files(__package__).joinpath("_data", kind)
    # A package on the filesystem gives a Path; a zipped one would not, and the GUI needs real files.
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    return None


def _checkout(kind: str) -> Path:
    return Path(__file__).resolve().parent.parent / kind


def _data_dir(kind: str) -> Path:
    installed = _installed(kind)
    if installed is not None:
        return installed
    checkout = _checkout(kind)
    if checkout.is_dir():
        return checkout
    raise BundledDataMissing(kind, [resources.files(__package__).joinpath("_data", kind), checkout])


def fixtures_dir() -> Path:
    """The bundled fixtures: the demo request, recorded results, traces."""
    return _data_dir("fixtures")


def resources_dir() -> Path:
    """The bundled resources: icons (and anything else the GUI loads at run time)."""
    return _data_dir("resources")


def demo_request_path() -> Path:
    return fixtures_dir() / "demo.request.json"


def app_icon_files() -> list[Path]:
    """The app icon's PNGs (16 to 256 px, rendered from its SVG), the ones that exist, smallest first."""
    icons = resources_dir() / "icons"
    files = [icons / f"{ICON_NAME}-{size}.png" for size in ICON_SIZES]
    return [path for path in files if path.is_file()]


def app_icon_svg() -> Path:
    """The app icon as drawn (the desktop's scalable icon; the PNGs are rendered from it)."""
    return resources_dir() / "icons" / f"{ICON_NAME}.svg"
