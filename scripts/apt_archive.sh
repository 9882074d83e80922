# Sourced by the scripts that fetch Debian 13 source packages through a private apt
# configuration (scripts/hiredis.sh): the Debian archive's address is taken from this machine's
# own apt sources, so the repository names no mirror and the scripts use whatever the machine uses.

# debian_archive_uri: prints the first URI of the main Debian archive (the entry whose suite is
# the release itself or its -updates, not -security or -backports) in
# /etc/apt/sources.list.d/*.sources (deb822) or the deb lines of /etc/apt/sources.list(.d/*.list).
# Returns 1, with a message on stderr, when there is none.
debian_archive_uri() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822: stanzas separated by blank lines; keep the URIs of a stanza of type deb whose
    # suites include one without a dash suffix of -security.
    uri=$(awk '
      BEGIN { RS = ""; FS = "\n" }
      {
        types = ""; uris = ""; suites = ""
        for (i = 1; i <= NF; i++) {
          line = $i
          if (line ~ /^[ \t]*#/) continue
          if (tolower(line) ~ /^types:/)  { sub(/^[^:]*:[ \t]*/, "", line); types = line }
          if (tolower(line) ~ /^uris:/)   { sub(/^[^:]*:[ \t]*/, "", line); uris = line }
          if (tolower(line) ~ /^suites:/) { sub(/^[^:]*:[ \t]*/, "", line); suites = line }
        }
        if (types !~ /(^|[ \t])deb([ \t]|$)/ || uris == "") next
        n = split(suites, s, /[ \t]+/)
        for (j = 1; j <= n; j++) if (s[j] != "" && s[j] !~ /-(security|backports)$/) { split(uris, u, /[ \t]+/); print u[1]; exit }
      }' "$f")
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    # deb [options] URI SUITE COMPONENTS...
    uri=$(sed -n 's/^[ \t]*deb[ \t]\+\(\[[^]]*\][ \t]\+\)\?\([^ \t]\+\)[ \t]\+\([^ \t]\+\).*/\2 \3/p' "$f" |
      awk '$2 !~ /-(security|backports)$/ && $2 !~ /\/updates$/ { print $1; exit }')
    [ -n "$uri" ] && { echo "${uri%/}"; return 0; }
  done
  echo "no Debian archive found in this machine's apt sources (/etc/apt/sources.list.d/*.sources, /etc/apt/sources.list)" >&2
  return 1
}

# private_trixie_apt DIR: a private apt configuration under DIR with one deb-src line for Debian
# 13 (trixie) on the archive debian_archive_uri names; sets ARCHIVE and the apt-get options
# apt_private=(...) that use it (the system's apt sources and lists are left alone).
private_trixie_apt() {
  local dir=$1
  mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
  ARCHIVE=$(debian_archive_uri) || return 1
  echo "deb-src $ARCHIVE trixie main" >"$dir/apt/sources.list"
  apt_private=(
    -o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache"
    -o APT::Sandbox::User=root
  )
}
