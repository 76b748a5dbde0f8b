#!/usr/bin/env bash
# Put Context Inspector in this person's application menu, from the unpacked application folder.
#
#   ./install-desktop.sh              link the commands into ~/.local/bin and add the menu entry, icons, metainfo
#   ./install-desktop.sh --uninstall  remove exactly what the line above added
#
# Needs no root: everything goes under $XDG_DATA_HOME (default ~/.local/share) and ~/.local/bin. The folder
# must stay where it is (the menu entry and the links point into it); run this again after moving it.
set -euo pipefail

APP_ID="io.github.context_inspector.ContextInspector"
NAME="context-inspector"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="${XDG_DATA_HOME:-$HOME/.local/share}"
BIN="$HOME/.local/bin"
ICON_SIZES=(16 32 48 64 128 256)

die() { printf 'install-desktop.sh: %s\n' "$*" >&2; exit 1; }

installed_files() {
    echo "$DATA/applications/$APP_ID.desktop"
    echo "$DATA/metainfo/$APP_ID.metainfo.xml"
    echo "$DATA/icons/hicolor/scalable/apps/$APP_ID.svg"
    for size in "${ICON_SIZES[@]}"; do echo "$DATA/icons/hicolor/${size}x${size}/apps/$APP_ID.png"; done
    echo "$BIN/$NAME"
    echo "$BIN/context-assembler"
}

refresh_menus() {
    if command -v update-desktop-database >/dev/null; then update-desktop-database -q "$DATA/applications"; fi
}

if [[ "${1:-}" == "--uninstall" ]]; then
    while read -r path; do rm -f "$path"; done < <(installed_files)
    refresh_menus
    echo "Removed Context Inspector's menu entry, icons and command links."
    exit 0
fi
[[ $# -eq 0 ]] || die "unknown option '$1' (use no option to install, or --uninstall)"

[[ -x "$HERE/$NAME" ]] || die "$HERE/$NAME is missing: run this script from the unpacked application folder"
[[ -d "$HERE/share" ]] || die "$HERE/share is missing: the application folder is incomplete"

mkdir -p "$DATA/applications" "$DATA/metainfo" "$BIN"
# the menu entry runs this folder's executable, whatever PATH holds
sed -e "s|^Exec=$NAME |Exec=\"$HERE/$NAME\" |" -e "s|^TryExec=$NAME\$|TryExec=$HERE/$NAME|" \
    "$HERE/share/applications/$APP_ID.desktop" >"$DATA/applications/$APP_ID.desktop"
grep -q "^Exec=\"$HERE/$NAME\" " "$DATA/applications/$APP_ID.desktop" \
    || die "could not point the menu entry at $HERE/$NAME"
install -m 644 "$HERE/share/metainfo/$APP_ID.metainfo.xml" "$DATA/metainfo/"
install -D -m 644 "$HERE/share/icons/hicolor/scalable/apps/$APP_ID.svg" "$DATA/icons/hicolor/scalable/apps/$APP_ID.svg"
for size in "${ICON_SIZES[@]}"; do
    install -D -m 644 "$HERE/share/icons/hicolor/${size}x${size}/apps/$APP_ID.png" \
        "$DATA/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
done
ln -sfn "$HERE/$NAME" "$BIN/$NAME"
ln -sfn "$HERE/context-assembler" "$BIN/context-assembler"
refresh_menus

echo "Context Inspector is in the application menu (Development), and '$NAME' and 'context-assembler' are"
echo "linked into $BIN$([[ ":$PATH:" == *":$BIN:"* ]] || echo " (not on your PATH yet: add it to use them by name)")."
