"""Render the app icon's PNGs from its SVG, at the sizes desktops ask for.

    .venv/bin/python packaging/render_icons.py            write resources/icons/context-inspector-<N>.png
    .venv/bin/python packaging/render_icons.py --check    compare only; exit 1 naming any PNG that differs

Uses PySide6's QSvgRenderer (QtSvg ships in PySide6-Essentials), so no other tool is needed. The PNGs are
committed: the app and the packages use them as they are, and only a change to the SVG calls for this.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "resources" / "icons"
SVG = ICONS / "context-inspector.svg"
SIZES = (16, 32, 48, 64, 128, 256)
# --check allows this much difference per colour channel: antialiasing may move by a step between Qt builds.
CHANNEL_TOLERANCE = 8


def png_path(size: int) -> Path:
    return ICONS / f"context-inspector-{size}.png"


def render(svg: Path, size: int):
    """The SVG drawn into a transparent ``size`` x ``size`` QImage."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: {svg}: not an SVG that Qt can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    return image


def largest_difference(a, b) -> int:
    """The largest difference of one colour channel between two images of the same size."""
    from PySide6.QtGui import QImage

    a = a.convertToFormat(QImage.Format.Format_ARGB32)
    b = b.convertToFormat(QImage.Format.Format_ARGB32)
    worst = 0
    for y in range(a.height()):
        for x in range(a.width()):
            pa, pb = a.pixel(x, y), b.pixel(x, y)
            for shift in (0, 8, 16, 24):
                worst = max(worst, abs(((pa >> shift) & 0xFF) - ((pb >> shift) & 0xFF)))
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="render_icons", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the committed PNGs with a fresh render")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication, QImage

    app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])  # noqa: F841 (QtSvg wants an application)
    stale: list[str] = []
    for size in SIZES:
        image = render(SVG, size)
        target = png_path(size)
        if args.check:
            committed = QImage(str(target))
            if committed.isNull() or committed.size() != image.size():
                stale.append(f"{target.relative_to(ROOT)}: missing or not {size}x{size}")
            elif (diff := largest_difference(committed, image)) > CHANNEL_TOLERANCE:
                stale.append(f"{target.relative_to(ROOT)}: differs from the SVG by up to {diff} per channel")
        elif not image.save(str(target), "PNG"):
            raise SystemExit(f"render_icons: {target}: could not be written")
        else:
            print(f"wrote {target.relative_to(ROOT)}")
    for line in stale:
        print(f"render_icons: {line} (run: .venv/bin/python packaging/render_icons.py)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
