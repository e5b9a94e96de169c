#!/usr/bin/env bash
# Package sizes and method sets, measured on hand-written, non-test Go.
# Prints lines per package and the types with the most methods, and fails
# when a package passes MAX_LINES or a type passes MAX_METHODS (server/httpapi,
# one thin handler per generated operation, is excepted from both), or when
# a package imports server/httpapi or server/app (only main, app and the
# in-process test harness may).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

MAX_LINES="${MAX_LINES:-3000}"
MAX_METHODS="${MAX_METHODS:-45}"
EXCEPT="server/httpapi"
module="$(go list -m)"
fail=0

echo "lines  package (hand-written, non-test Go)"
while read -r dir; do
	files=$(find "$dir" -maxdepth 1 -name '*.go' ! -name '*_test.go' ! -name '*.gen.go')
	[[ -z "$files" ]] && continue
	n=$(cat $files | wc -l)
	printf '%5d  %s\n' "$n" "$dir"
	if ((n > MAX_LINES)) && [[ "$dir" != "$EXCEPT" ]]; then
		echo "  over $MAX_LINES lines" >&2
		fail=1
	fi
done < <(go list -f '{{.Dir}}' ./server/... ./sdkgo/... | sed "s|^$PWD/||") | sort -rn | head -15

echo
echo "methods  type"
while read -r count type; do
	printf '%7d  %s\n' "$count" "$type"
	if ((count > MAX_METHODS)) && [[ "$type" != "$EXCEPT".* ]]; then
		echo "  over $MAX_METHODS methods" >&2
		fail=1
	fi
done < <(
	find server sdkgo -name '*.go' ! -name '*_test.go' ! -name '*.gen.go' -print0 |
		xargs -0 awk '
			/^func \([A-Za-z_][A-Za-z0-9_]* \*?[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\) / {
				t = $3; sub(/^\*/, "", t); sub(/\[.*$/, "", t); sub(/\).*$/, "", t)
				d = FILENAME; sub(/\/[^\/]*$/, "", d)
				print d "." t
			}' | sort | uniq -c | sort -rn | head -8
)

echo
upward=$(go list -f '{{.ImportPath}}: {{join .Imports " "}}' ./... |
	grep -E " $module/server/(httpapi|app)( |$)" | grep -vE "^$module(/server/app|/server/internal/apptest)?: " || true)
if [[ -n "$upward" ]]; then
	echo "imports of server/httpapi or server/app outside main and app:" >&2
	echo "$upward" >&2
	fail=1
fi
exit "$fail"
