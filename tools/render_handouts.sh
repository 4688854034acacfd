#!/bin/sh
# Renders every handout to HTML with a table of contents: build/handouts/NAME.html, figures
# alongside, links between handouts pointing at the HTML. Needs pandoc (Debian/Ubuntu:
# apt-get install pandoc; other systems: https://pandoc.org); the Markdown reads fine without it.
# Exit status 77 when pandoc is missing.
#
# PDF too, where pandoc has a PDF engine on this machine: build/handouts/NAME.pdf. Engines tried in
# order: weasyprint, wkhtmltopdf, prince, pagedjs-cli (from HTML), then xelatex, lualatex, pdflatex
# (LaTeX; only with rsvg-convert, which pandoc needs for the SVG figures). Without one, one line says
# PDF was skipped and why; KIT_PDF=0 skips it on purpose. A PDF that fails is reported and does not
# change the exit status: the HTML is what the kit's tests check.
set -eu
cd "$(dirname "$0")/.."
OUT=build/handouts
if ! command -v pandoc > /dev/null 2>&1; then
    echo "make handouts needs pandoc (apt-get install pandoc); the handouts in handouts/ are plain Markdown"
    exit 77
fi
mkdir -p "$OUT/figures"
# Long table cells and code wrap instead of making the page scroll sideways. A figure keeps the size it
# was drawn at (its text 11 px or more), wider than the text column where the window allows and
# centred on it, and shrinks only in a window narrower than the figure.
cat > "$OUT/.style.html" <<'STYLE'
<style>
table { display: block; max-width: 100%; overflow-x: auto; }
td, th { overflow-wrap: anywhere; }
code { overflow-wrap: anywhere; }
img { display: block; max-width: min(1000px, calc(100vw - 2em)); height: auto; position: relative; left: 50%;
      transform: translateX(-50%); }
</style>
STYLE
# The figures only: handouts/figures/data/ holds the documents they were drawn from, which no page shows.
find handouts/figures -maxdepth 1 -type f -exec cp {} "$OUT/figures/" \;
for md in handouts/*.md; do
    name=$(basename "$md" .md)
    title=$(sed -n 's/^# //p' "$md" | head -n 1)
    # The first heading becomes the page title; internal .md links become .html links.
    sed '1{/^# /d}' "$md" |
        pandoc --from gfm --to html5 --standalone --toc --toc-depth 3 --include-in-header "$OUT/.style.html" \
            --metadata title="$title" --metadata lang=en |
        sed -E 's/href="([A-Za-z0-9_.-]+)\.md(#[^"]*)?"/href="\1.html\2"/g' > "$OUT/$name.html"
    echo "wrote $OUT/$name.html"
done

pdf_engine=
if [ "${KIT_PDF:-1}" = 0 ]; then
    echo "PDF skipped: KIT_PDF=0"
    exit 0
fi
for engine in weasyprint wkhtmltopdf prince pagedjs-cli; do
    if command -v "$engine" > /dev/null 2>&1; then pdf_engine=$engine; break; fi
done
if [ -z "$pdf_engine" ] && command -v rsvg-convert > /dev/null 2>&1; then
    for engine in xelatex lualatex pdflatex; do
        if command -v "$engine" > /dev/null 2>&1; then pdf_engine=$engine; break; fi
    done
fi
if [ -z "$pdf_engine" ]; then
    echo "PDF skipped: pandoc has no usable PDF engine here (none of weasyprint, wkhtmltopdf, prince, pagedjs-cli; nor xelatex, lualatex or pdflatex with rsvg-convert for the SVG figures)"
    exit 0
fi
# HTML engines: no automatic hyphenation (weasyprint 57 can fail on it, and code words must not
# be split).
pdf_style=
case $pdf_engine in
    *latex) ;;
    *) pdf_style='<style>* { hyphens: manual !important; }</style>' ;;
esac
pdf_failed=0
for md in handouts/*.md; do
    name=$(basename "$md" .md)
    title=$(sed -n 's/^# //p' "$md" | head -n 1)
    # Run inside $OUT, where figures/ is, so the engine finds the images; links point at the PDFs.
    if sed -e '1{/^# /d}' -E -e 's/\]\(([A-Za-z0-9_.-]+)\.md(#[^)]*)?\)/](\1.pdf)/g' "$md" |
        (cd "$OUT" && pandoc --from gfm --standalone --toc --toc-depth 2 --metadata title="$title" \
            --metadata lang=en --resource-path=. ${pdf_style:+--variable "header-includes=$pdf_style"} \
            --pdf-engine="$pdf_engine" -o "$name.pdf") \
            > "$OUT/$name.pdf.log" 2>&1; then
        echo "wrote $OUT/$name.pdf ($pdf_engine)"
    else
        pdf_failed=$((pdf_failed + 1))
        echo "PDF of $name failed with $pdf_engine: $(grep -v '^$' "$OUT/$name.pdf.log" | head -n 1) (log: $OUT/$name.pdf.log)"
    fi
done
[ "$pdf_failed" = 0 ] || echo "PDF: $pdf_failed handout(s) not rendered; the HTML is complete"
