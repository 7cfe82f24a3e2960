#!/usr/bin/env bash
# Builds the browser code editor (CodeMirror 6, the sources beside this file) into
# static/editor/editor.js: a minified IIFE exposing window.SkynetEditor.
#
#   bash editor/build.sh
#
# Installs exactly what package-lock.json pins (npm ci, no install scripts: esbuild
# runs from its platform package), then bundles with esbuild. The first line of the
# bundle names the sha256 of the lock file it was built from;
# tests/metrics/test_editor_bundle.py checks that it matches the committed lock file.
# The bundle is committed, so running the site needs no Node.
set -euo pipefail
cd "$(dirname "$0")"

command -v npm >/dev/null || { echo "build_editor: npm (Node 18+) is needed" >&2; exit 1; }

npm ci --ignore-scripts --no-audit --no-fund

lock_sha=$(sha256sum package-lock.json | cut -d' ' -f1)
esbuild_version=$(node -p 'require("./node_modules/esbuild/package.json").version')
cm_view=$(node -p 'require("./node_modules/@codemirror/view/package.json").version')
banner="/* SkynetEditor: CodeMirror ${cm_view} (MIT, codemirror.net) for metric.py; built by editor/build.sh with esbuild ${esbuild_version} from package-lock.json sha256=${lock_sha} */"

out=../static/editor
mkdir -p "$out"
node_modules/.bin/esbuild index.js \
  --bundle \
  --format=iife \
  --global-name=SkynetEditor \
  --minify \
  --target=es2020 \
  --charset=utf8 \
  --legal-comments=none \
  --log-level=warning \
  "--banner:js=${banner}" \
  --outfile="$out/editor.js"

raw=$(wc -c <"$out/editor.js")
gz=$(gzip -9 -c "$out/editor.js" | wc -c)
echo "build_editor: wrote static/editor/editor.js (${raw} bytes, ${gz} gzipped), package-lock.json sha256=${lock_sha}"
