#!/bin/sh
# Renders every handout to HTML with a table of contents: build/handouts/NAME.html, figures
# alongside, links between handouts pointing at the HTML. Needs pandoc (Debian/Ubuntu:
# apt-get install pandoc; other systems: https://pandoc.org); the Markdown reads fine without it.
# Exit status 77 when pandoc is missing.
set -eu
cd "$(dirname "$0")/.."
OUT=build/handouts
if ! command -v pandoc > /dev/null 2>&1; then
    echo "make handouts needs pandoc (apt-get install pandoc); the handouts in handouts/ are plain Markdown"
    exit 77
fi
mkdir -p "$OUT/figures"
cp handouts/figures/* "$OUT/figures/"
for md in handouts/*.md; do
    name=$(basename "$md" .md)
    title=$(sed -n 's/^# //p' "$md" | head -n 1)
    # The first heading becomes the page title; internal .md links become .html links.
    sed '1{/^# /d}' "$md" |
        pandoc --from gfm --to html5 --standalone --toc --toc-depth 2 \
            --metadata title="$title" --metadata lang=en |
        sed -E 's/href="([A-Za-z0-9_.-]+)\.md(#[^"]*)?"/href="\1.html\2"/g' > "$OUT/$name.html"
    echo "wrote $OUT/$name.html"
done
