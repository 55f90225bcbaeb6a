#!/usr/bin/env bash
# check-layers.sh - hold src/ to its layering: a folder includes only from
# its own layer and the layers below it. From the bottom:
#
#   core    src/core src/proto src/net src/lua  (no server knowledge)
#   types   src/types    key entries and value encodings
#   store   src/store    the keyspace
#   server  src/server   workers, execution, the command table's machinery
#   cmd     src/cmd      command handlers and their .def rows
#   app     src/app      the command table built from the rows, and main
#
# Every `#include "..."` of a .c, .h or .def file under src/ is resolved
# against its file and must land in a folder of the same or a lower layer.
# Given a build directory (make passes $(BUILD)), the objects of that build
# are checked the same way: a symbol an object uses must not be defined by
# an object of a higher layer (a function declared in a lower header but
# defined above it, say). Objects whose source no longer exists are
# skipped. Prints every violation and exits 1 when there is one.
#
# usage: scripts/check-layers.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-}"

# folder -> layer rank, and the layer names by rank.
layers="core=0 proto=0 net=0 lua=0 types=1 store=2 server=3 cmd=4 app=5"
names="core types store server cmd app"

bad=0

# ---- includes ---------------------------------------------------------------
mapfile -t files < <(find src -mindepth 2 -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort)
incl_out=$({ grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "${files[@]}" /dev/null || true; } |
    awk -v layers="$layers" -v names="$names" '
    BEGIN {
        n = split(layers, kv, " ")
        for (i = 1; i <= n; i++) { split(kv[i], p, "="); rank[p[1]] = p[2] }
        split(names, lname, " ")
    }
    {
        # src/<folder>/<file>:<line>:#include "<path>"
        file = $0; sub(/:.*/, "", file)
        rest = substr($0, length(file) + 2)
        line = rest; sub(/:.*/, "", line)
        path = rest; sub(/^[^"]*"/, "", path); sub(/".*/, "", path)
        checked++
        nf = split(file, fc, "/")
        from = fc[2]
        # Resolve path against the file'\''s folder.
        depth = 0
        for (i = 1; i < nf; i++) comp[++depth] = fc[i]
        np = split(path, pc, "/")
        for (i = 1; i <= np; i++) {
            if (pc[i] == "..") { if (depth > 0) depth--; else { depth = -1; break } }
            else if (pc[i] != ".") comp[++depth] = pc[i]
        }
        if (!(from in rank)) {
            if (!(from in unknown)) {
                printf "src/%s: a folder with no layer (add it to scripts/check-layers.sh)\n", from
                unknown[from] = 1; bad++
            }
            next
        }
        if (depth < 2 || comp[1] != "src") {
            printf "%s:%s: %s includes \"%s\", outside src/\n", file, line, from, path
            bad++
            next
        }
        to = depth > 2 ? comp[2] : path # a file directly in src/ has no layer
        if (!(to in rank)) {
            printf "%s:%s: %s includes \"%s\" from src/%s, a folder with no layer\n", file, line, from, path, to
            bad++
            next
        }
        if (rank[to] > rank[from]) {
            printf "%s:%s: %s (layer %s) includes \"%s\" from %s (layer %s, above it)\n", file, line, from,
                lname[rank[from] + 1], path, to, lname[rank[to] + 1]
            bad++
        }
    }
    END { printf "#checked %d %d\n", checked, bad }')
incl_checked=$(printf '%s\n' "$incl_out" | sed -n 's/^#checked \([0-9]*\) .*/\1/p')
incl_bad=$(printf '%s\n' "$incl_out" | sed -n 's/^#checked [0-9]* \([0-9]*\)$/\1/p')
printf '%s\n' "$incl_out" | grep -v '^#checked ' || true
bad=$((bad + incl_bad))
summary="$incl_checked includes"

# ---- symbols of a build -----------------------------------------------------
if [ -n "$build" ] && [ -d "$build/obj" ]; then
    objs=()
    for src in "${files[@]}"; do
        [ "${src%.c}" != "$src" ] || continue
        o="$build/obj/${src#src/}"
        o="${o%.c}.o"
        [ -f "$o" ] && objs+=("$o")
    done
    if [ "${#objs[@]}" -gt 0 ]; then
        sym_out=$(
            for o in "${objs[@]}"; do
                nm -g --defined-only "$o" | awk -v o="$o" 'NF == 3 { print "D", $3, o }'
                nm -u "$o" | awk -v o="$o" '{ print "U", $NF, o }'
            done | awk -v layers="$layers" -v names="$names" -v build="$build" '
            BEGIN {
                n = split(layers, kv, " ")
                for (i = 1; i <= n; i++) { split(kv[i], p, "="); rank[p[1]] = p[2] }
                split(names, lname, " ")
            }
            function folder(o,   r, f) { r = substr(o, length(build) + 6); split(r, f, "/"); return f[1] }
            $1 == "D" { def[$2] = $3; next }
            { use[++nu] = $2; user[nu] = $3 }
            END {
                # One line per object and higher layer, naming a few symbols.
                for (i = 1; i <= nu; i++) {
                    s = use[i]
                    if (!(s in def)) continue
                    from = folder(user[i]); to = folder(def[s])
                    if (!(from in rank) || !(to in rank) || rank[to] <= rank[from]) continue
                    k = user[i] SUBSEP to
                    if (!(k in cnt)) { order[++nk] = k; obj[k] = user[i]; ufrom[k] = from; uto[k] = to }
                    if (++cnt[k] <= 4) syms[k] = syms[k] (cnt[k] > 1 ? ", " : "") s
                    bad++
                }
                for (j = 1; j <= nk; j++) {
                    k = order[j]
                    more = cnt[k] > 4 ? sprintf(" and %d more", cnt[k] - 4) : ""
                    printf "%s: %s (layer %s) uses %d symbol%s defined in %s (layer %s, above it): %s%s\n", obj[k],
                        ufrom[k], lname[rank[ufrom[k]] + 1], cnt[k], cnt[k] == 1 ? "" : "s", uto[k],
                        lname[rank[uto[k]] + 1], syms[k], more
                }
                printf "#bad %d\n", bad
            }')
        sym_bad=$(printf '%s\n' "$sym_out" | sed -n 's/^#bad \([0-9]*\)$/\1/p')
        printf '%s\n' "$sym_out" | grep -v '^#bad ' || true
        bad=$((bad + sym_bad))
        summary="$summary, the symbols of ${#objs[@]} objects in $build"
    fi
fi

if [ "$bad" -ne 0 ]; then
    if [ "$bad" -eq 1 ]; then what="1 dependency points"; else what="$bad dependencies point"; fi
    echo "check-layers: $what up the layers ($names)" >&2
    exit 1
fi
echo "check-layers: ok ($summary point down the layers: $names)"
