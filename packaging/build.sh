#!/usr/bin/env bash
# Build what a person can be handed: the wheel and the one-folder desktop application.
#
#   packaging/build.sh            everything below, in this order (what `make dist` runs)
#   packaging/build.sh wheel      dist/context_inspector-<version>-py3-none-any.whl and the sdist
#   packaging/build.sh app        dist/context-inspector/ (PyInstaller) + dist/context-inspector-<version>-linux-<arch>.tar.gz
#   packaging/build.sh validate   appstreamcli and desktop-file-validate on packaging/linux/
#
# PYTHON names the interpreter to build with (default: the repository's .venv). The build-only tools come from
# the project's `build` extra and are installed into that environment when missing. Writes only under dist/
# and build/ (both ignored by git).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
NAME="context-inspector"
APP_ID="io.github.context_inspector.ContextInspector"
LINUX="$ROOT/packaging/linux"
DIST="$ROOT/dist"
ICON_SIZES=(16 32 48 64 128 256)

say() { printf '==> %s\n' "$*"; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

[[ -x "$PYTHON" ]] || die "no Python at $PYTHON: run 'make test' (or 'make demo') once to create .venv, or set PYTHON"
VERSION="$("$PYTHON" -c 'import tomllib,sys; print(tomllib.load(open(sys.argv[1],"rb"))["project"]["version"])' "$ROOT/pyproject.toml")"

need_build_tools() {
    # the build tools, and the project itself (the app folder copies its installed metadata: the version)
    if ! "$PYTHON" -c 'import build, PyInstaller, importlib.metadata as m; m.version("context-inspector")' 2>/dev/null; then
        say "installing the build tools (the project's [build] extra) into $("$PYTHON" -c 'import sys; print(sys.prefix)')"
        "$PYTHON" -m pip install --quiet -e "${ROOT}[build]"
    fi
}

need_command() {  # need_command COMMAND DEBIAN-PACKAGE
    command -v "$1" >/dev/null && return 0
    [[ "$(id -u)" == 0 ]] || die "$1 is missing: install the Debian package '$2' (apt-get install -y $2)"
    say "installing $2 (for $1)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}

build_wheel() {
    need_build_tools
    say "wheel and sdist $VERSION -> dist/"
    rm -f "$DIST"/context_inspector-"$VERSION"-*.whl "$DIST"/context_inspector-"$VERSION".tar.gz
    # sdist first, then the wheel from the unpacked sdist: proves the sdist is complete and leaves no stale build/lib
    "$PYTHON" -m build --sdist --wheel --outdir "$DIST" "$ROOT" >"$ROOT/build/wheel.log" 2>&1 \
        || { tail -n 40 "$ROOT/build/wheel.log" >&2; die "the wheel build failed (full log: build/wheel.log)"; }
    local wheel="$DIST/context_inspector-$VERSION-py3-none-any.whl"
    [[ -f "$wheel" ]] || die "expected $wheel, it was not built"
    "$PYTHON" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
required = ["inspector/_data/fixtures/demo.request.json", "inspector/_data/resources/icons/context-inspector.svg",
            "inspector/_data/resources/icons/context-inspector-256.png", "core/cli.py", "inspector/app.py"]
missing = [n for n in required if n not in names]
unwanted = [n for n in names if "screenshots" in n or "/tests/" in n]
if missing or unwanted:
    sys.exit(f"build.sh: {sys.argv[1]}: missing {missing}, unwanted {unwanted}")
PY
    say "$(du -h "$wheel" | cut -f1) $wheel"
}

build_app() {
    need_build_tools
    local folder="$DIST/$NAME"
    say "PyInstaller one-folder app -> dist/$NAME/"
    "$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN --distpath "$DIST" --workpath "$ROOT/build/pyinstaller" \
        "$ROOT/packaging/$NAME.spec" >"$ROOT/build/pyinstaller.log" 2>&1 \
        || { tail -n 40 "$ROOT/build/pyinstaller.log" >&2; die "PyInstaller failed (full log: build/pyinstaller.log)"; }
    # one executable, two commands: the launcher picks the command line of the core by this name
    ln -sfn "$NAME" "$folder/context-assembler"
    # desktop integration, laid out as under /usr/share, and the script that installs it for one person
    local share="$folder/share"
    rm -rf "$share"
    install -D -m 644 "$LINUX/$APP_ID.desktop" "$share/applications/$APP_ID.desktop"
    install -D -m 644 "$LINUX/$APP_ID.metainfo.xml" "$share/metainfo/$APP_ID.metainfo.xml"
    install -D -m 644 "$ROOT/resources/icons/$NAME.svg" "$share/icons/hicolor/scalable/apps/$APP_ID.svg"
    for size in "${ICON_SIZES[@]}"; do
        install -D -m 644 "$ROOT/resources/icons/$NAME-$size.png" "$share/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
    done
    install -m 755 "$LINUX/install-desktop.sh" "$folder/install-desktop.sh"

    say "smoke test: --version, --demo --screenshot, context-assembler assemble (from outside the repository)"
    local smoke="$ROOT/build/smoke"
    rm -rf "$smoke" && mkdir -p "$smoke"
    local printed
    printed="$(cd "$smoke" && "$folder/$NAME" --version)"
    [[ "$printed" == "$NAME $VERSION" ]] || die "--version printed '$printed', expected '$NAME $VERSION'"
    local start end
    start="$(date +%s%N)"
    (cd "$smoke" && QT_QPA_PLATFORM=offscreen "$folder/$NAME" --demo --screenshot "$smoke/demo.png" 2>"$smoke/stderr") \
        || { cat "$smoke/stderr" >&2; die "the app could not render the demo"; }
    end="$(date +%s%N)"
    [[ -s "$smoke/demo.png" ]] || die "the demo screenshot is empty"
    cp "$smoke/demo.png" "$ROOT/build/$NAME-demo.png"
    (cd "$smoke" && "$folder/context-assembler" assemble \
        "$folder/_internal/inspector/_data/fixtures/rag_tight.request.json" -o "$smoke/tight.result.json") \
        || die "context-assembler could not assemble a fixture"
    "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$smoke/tight.result.json" \
        || die "context-assembler wrote a result that is not JSON"
    say "demo screenshot in $(( (end - start) / 1000000 )) ms (copy: build/$NAME-demo.png)"

    local arch tarball
    arch="$(uname -m)"
    tarball="$DIST/$NAME-$VERSION-linux-$arch.tar.gz"
    say "archive -> ${tarball#"$ROOT"/}"
    tar -C "$DIST" -czf "$tarball" "$NAME"
    say "$(du -sh "$folder" | cut -f1) dist/$NAME/, $(du -h "$tarball" | cut -f1) ${tarball#"$ROOT"/}"
}

validate() {
    need_command appstreamcli appstream
    need_command desktop-file-validate desktop-file-utils
    say "appstreamcli validate $APP_ID.metainfo.xml"
    appstreamcli validate --no-net --strict "$LINUX/$APP_ID.metainfo.xml"
    say "desktop-file-validate $APP_ID.desktop"
    desktop-file-validate "$LINUX/$APP_ID.desktop"
    say "the metainfo's newest release is the package version ($VERSION)"
    grep -q "<release version=\"$VERSION\"" "$LINUX/$APP_ID.metainfo.xml" \
        || die "$APP_ID.metainfo.xml has no <release version=\"$VERSION\">: add one for this version"
}

mkdir -p "$DIST" "$ROOT/build"
case "${1:-all}" in
    wheel) build_wheel ;;
    app) build_app ;;
    validate) validate ;;
    all) validate; build_wheel; build_app ;;
    *) die "unknown step '$1': use wheel, app, validate or all (default)" ;;
esac
