# Sourced by ci.sh and samples/java/mlp/run.sh: finds a JDK >= 22 (the FFM API is final
# since 22) and exports JAVA_HOME. Looks at $JAVA_HOME, then /usr/lib/jvm/*, newest first;
# tries Debian's openjdk-25 package when none is there and apt-get can install it.

kiln_jdk_major() { # JDK_HOME -> major version from its `release` file, or nothing
  local v
  v="$(sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$1/release" 2>/dev/null)" || return 0
  v="${v#1.}"
  echo "${v%%[.+-]*}"
}

kiln_find_jdk() { # prints the home of the newest JDK >= 22, or fails
  local best="" best_major=0 home major
  for home in "${JAVA_HOME:-}" /usr/lib/jvm/*; do
    [ -n "$home" ] && [ -x "$home/bin/javac" ] || continue
    major="$(kiln_jdk_major "$home")"
    [ -n "$major" ] || continue
    if [ "$major" -ge 22 ] && [ "$major" -gt "$best_major" ]; then
      best="$home" best_major="$major"
    fi
  done
  [ -n "$best" ] && echo "$best"
}

kiln_use_jdk() { # exports JAVA_HOME and PATH for a JDK >= 22, installing one if possible
  local home
  if ! home="$(kiln_find_jdk)"; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      echo "kiln: no JDK >= 22 found; trying apt-get install openjdk-25-jdk-headless" >&2
      apt-get install -y -qq openjdk-25-jdk-headless >/dev/null 2>&1 || true
    fi
    home="$(kiln_find_jdk)" || {
      echo "kiln: the Java binding needs a JDK >= 22 (FFM API); none in \$JAVA_HOME or" \
        "/usr/lib/jvm. Install one (e.g. Temurin 25) and set JAVA_HOME." >&2
      return 1
    }
  fi
  export JAVA_HOME="$home"
  export PATH="$JAVA_HOME/bin:$PATH"
  # Maven's own libraries trip JDK 24+'s sun.misc.Unsafe warning; it is noise here.
  if [ "$(kiln_jdk_major "$home")" -ge 24 ]; then
    export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
  fi
  # Maven 3.8's console library writes a colour reset (ESC [0m) to stdout and
  # stderr at exit even in batch mode (3.9 has -Dstyle.color=never); it would
  # land in the output of the sample and of pipes.
  export MAVEN_OPTS="${MAVEN_OPTS:-} -Djansi.noreset=true"
}
