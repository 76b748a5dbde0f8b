"""``context-inspector [FILE ...]``: the command line of the desktop app.

``--demo`` opens the bundled demo request beside its naive baseline; ``--screenshot OUT.png``
renders the window at a fixed size once loading is done, then exits (0, or 1 with the problems on
stderr when a file could not be read); with ``--replay-limit N`` the picture shows the replay panel
and the selected request replayed under a context limit of N tokens.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from . import APP_NAME, DIST_NAME, app_version
from .paths import APP_ID, app_icon_files

SCREENSHOT_SIZE = (1600, 1000)
TABS = ("item", "request", "audit", "json")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="context-inspector",
        description="See exactly what an LLM request carried: the budget, every item's decision, the rendered "
                    "request and its audit.")
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="request JSON (assembled on open), recorded result JSON, or JSONL of many; or a "
                             "provider's request body, trace export (OTLP JSON/JSONL, Langfuse, Phoenix) or VCR "
                             "cassette, told apart by content and counted on open")
    parser.add_argument("--demo", action="store_true",
                        help="open the bundled demo request with its naive baseline beside it")
    parser.add_argument("--counter", metavar="SPEC",
                        help="token counter for this run: auto, mistral:<tokenizer>, openai:<model>, "
                             "harmony:<model>, estimate:<model> or hf:<directory> (default: the last one picked, "
                             "else auto: each imported request with its model's counter, our own requests with "
                             "the embedded one; the demo and screenshots of it always the embedded one)")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help=f"load, select the first request, save the window at {SCREENSHOT_SIZE[0]}x"
                             f"{SCREENSHOT_SIZE[1]} to OUT.png and exit")
    parser.add_argument("--row", type=int, default=1, metavar="N",
                        help="with --screenshot: select the N-th request of the list (default 1)")
    parser.add_argument("--tab", choices=TABS, default="item",
                        help="with --screenshot: the detail tab to show (default item)")
    parser.add_argument("--replay-limit", type=int, metavar="TOKENS",
                        help="open the replay panel and replay the selected request under this context limit "
                             "(the bars, the tree's change marks and the what-if chart show it)")
    parser.add_argument("--bar-view", choices=("fit", "window", "composition"),
                        help="with --screenshot: the budget bar's view (fit to input, whole window, composition)")
    parser.add_argument("--size", metavar="WxH",
                        help=f"with --screenshot: the window size (default {SCREENSHOT_SIZE[0]}x{SCREENSHOT_SIZE[1]})")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def _make_app():
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        # fractional scale factors as the screen reports them (crisp on 125%/150% displays)
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
        app = QApplication([sys.argv[0] if sys.argv else DIST_NAME])
    app.setApplicationName(DIST_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setOrganizationName("ContextInspector")
    app.setApplicationVersion(app_version())
    app.setDesktopFileName(APP_ID)  # lets the desktop match the window to its .desktop entry and icon
    app.setWindowIcon(_app_icon())
    from .qtfix import guard_none_refcount

    guard_none_refcount()  # PySide6 6.12 on CPython 3.11 would otherwise abort after a while of use
    return app


def _app_icon():
    from PySide6.QtGui import QIcon

    icon = QIcon()
    for path in app_icon_files():
        icon.addFile(str(path))
    return icon


def startup_counter(args: argparse.Namespace) -> str | None:
    """--counter if given; the demo always counts with the embedded counter (a remembered tokenizer
    directory may be gone or refuse the demo); otherwise None: the one remembered in settings."""
    if args.counter:
        return args.counter
    import core

    return core.DEFAULT_COUNTER if args.demo else None


def main(argv: list[str] | None = None) -> int:
    import multiprocessing

    multiprocessing.freeze_support()  # a packaged app's worker processes (workers.readpool) start here
    parser = build_parser()
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:  # argparse has printed the usage problem
        return int(exc.code or 0)
    if args.version:
        print(f"{DIST_NAME} {app_version()}")
        return 0
    if args.screenshot and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a screenshot needs no screen
    app = _make_app()

    from .mainwindow import MainWindow
    from .files.settings import Settings

    if args.screenshot:
        return _screenshot(args, Settings())
    # problems also go to stderr, for whoever started the app from a terminal
    logging.basicConfig(level=logging.WARNING, format="context-inspector: %(levelname)s: %(message)s")
    window = MainWindow(counter_spec=startup_counter(args), warm_workers=True)
    _report_unexpected_errors(window)
    _close_on_signals(app, window)
    window.show()
    if args.demo:
        window.open_demo()
    if args.files:
        window.open_files(args.files)
    if args.replay_limit is not None:
        _replay_once_loaded(window, args.replay_limit)
    return app.exec()


TERM_GRACE_SECONDS = 10.0  # a SIGTERM this soon after the first is the same request again (see below)


def _close_on_signals(app, window) -> None:
    """SIGTERM (a session ending, ``timeout``, ``kill``) or Ctrl+C in the terminal closes the window as its close
    button does: its state saved, its worker processes and threads stopped, exit code 0. Without it Python
    died mid-loop and left the workers' semaphores to the resource tracker's warning. A second Ctrl+C ends it at
    once; a second SIGTERM does only after ``TERM_GRACE_SECONDS``: ``timeout make demo`` signals make's process
    group and make its recipe, so the app is sent SIGTERM twice, a moment apart, and the second killed it halfway
    through its close (exit -15, the workers' semaphores left to the resource tracker's warning)."""
    import os
    import signal
    import time

    from PySide6.QtCore import QTimer

    def close_and_quit() -> None:
        window.close()
        app.quit()

    closing: list[float] = []  # when the first signal came

    def close(signum, _frame) -> None:
        now = time.monotonic()
        if not closing:
            closing.append(now)
            if signum == signal.SIGINT:
                signal.signal(signum, signal.SIG_DFL)  # a second Ctrl+C ends it at once
            QTimer.singleShot(0, close_and_quit)  # in the event loop, also when the signal came before it ran
            return
        if signum == signal.SIGTERM and now - closing[0] < TERM_GRACE_SECONDS:
            return  # the same request again while the window closes
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, close)
    ticks = QTimer(window)  # Python runs a signal handler only between bytecodes: wake it while Qt's loop waits
    ticks.timeout.connect(lambda: None)
    ticks.start(250)


def _replay_once_loaded(window, limit: int) -> None:
    """Open the replay panel and, once the first request is in, replay it under ``limit``."""
    from PySide6.QtCore import QTimer

    window.act_replay.trigger()
    timer = QTimer(window)
    timer.setInterval(100)

    def check() -> None:
        if not window.is_idle():
            return
        timer.stop()  # loading is done (what could not be opened, the message bar says)
        if window.current_row is not None and window.replay_panel.base is not None:
            window.replay_panel.set_limit(limit)

    timer.timeout.connect(check)
    timer.start()


def _report_unexpected_errors(window) -> None:
    """A bug in a slot must not print a traceback at the person: one line in the window, details in the log."""
    log = logging.getLogger("inspector")

    def hook(kind, value, trace) -> None:
        log.error("unexpected error", exc_info=(kind, value, trace))
        window.report("error", f"Unexpected error: {kind.__name__}: {value} (details in the log)")

    sys.excepthook = hook


def _screenshot(args: argparse.Namespace, settings) -> int:
    from PySide6.QtWidgets import QApplication

    import core

    from .mainwindow import MainWindow

    if not args.files and not args.demo:
        print("context-inspector: --screenshot needs a FILE or --demo", file=sys.stderr)
        return 2
    # reproducible pictures: nothing remembered; auto unless one is named (our own requests: the embedded
    # counter; imported ones: their model's, or an estimate that says so), the demo with the embedded one
    window = MainWindow(settings=settings, persist=False,
                        counter_spec=args.counter or (core.DEFAULT_COUNTER if args.demo else core.AUTO))
    window.resize(*SCREENSHOT_SIZE)
    window.show()
    if args.demo:
        window.open_demo()
    if args.files:
        window.open_files(args.files)
    ok = window.wait_until_idle()
    problems = [text for level, text in window.messages if level == "error"]
    if not ok:
        problems.append("loading did not finish within the time limit")
    if not problems and window.request_model.rowCount() == 0:
        problems.append(f"{', '.join(args.files) or 'the demo'}: no request or result was found")
    if problems:
        for text in problems:
            print(f"context-inspector: {text}", file=sys.stderr)
        nothing_read = window.request_model.rowCount() == 0
        window.shutdown()
        window.close()
        return 2 if nothing_read else 1  # 2: nothing could be read at all
    rows = window.request_proxy.rowCount()
    if not 1 <= args.row <= rows:
        print(f"context-inspector: --row {args.row}: the list has {rows} row{'s' if rows != 1 else ''}", file=sys.stderr)
        window.close()
        return 2
    window.select_proxy_row(args.row - 1)
    window.detail.setCurrentIndex(TABS.index(args.tab))
    size = SCREENSHOT_SIZE
    if args.size:
        try:
            size = tuple(int(v) for v in args.size.lower().split("x", 1))
        except ValueError:
            print(f"context-inspector: --size {args.size}: expected WIDTHxHEIGHT, e.g. 1280x800", file=sys.stderr)
            window.close()
            return 2
    window.resize(*size)
    if args.bar_view:
        window.bar.set_view(args.bar_view)
    if args.replay_limit is not None:
        window.act_replay.trigger()
        window.wait_until_idle()
        window.replay_panel.set_limit(args.replay_limit)
        if not window.wait_until_idle():
            print("context-inspector: the replay did not finish within the time limit", file=sys.stderr)
            window.shutdown()
            window.close()
            return 1
    window.wait_until_idle()  # the Request tab of the row selected above is rendered off the GUI thread
    QApplication.processEvents()
    out = Path(args.screenshot)
    saved = window.grab().save(str(out))
    window.close()
    QApplication.processEvents()
    if not saved:
        print(f"context-inspector: {out}: the screenshot could not be written", file=sys.stderr)
        return 1
    return 0
