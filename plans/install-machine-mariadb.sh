#!/bin/sh
# A build command that stands in for compiling MariaDB (the build tests use it; so can anyone
# trying `build = ...` without a compiler): installs the machine's own MariaDB binaries into
# $DBRIG_PREFIX in the seeds' RPM layout — the server in libexec/, scripts and tools in bin/,
# share files in share/mysql/, plugins in lib64/mysql/plugin/.
#
#   [[server]]
#   name = "built"
#   engine = "mariadb"
#   source = "."                                   # any folder: its files key the cache
#   build = "sh plans/install-machine-mariadb.sh"
set -e
: "${DBRIG_PREFIX:?run by dbrig as a [[server]] build command}"
mkdir -p "$DBRIG_PREFIX/libexec" "$DBRIG_PREFIX/bin" "$DBRIG_PREFIX/share" "$DBRIG_PREFIX/lib64/mysql"
cp /usr/sbin/mariadbd "$DBRIG_PREFIX/libexec/mariadbd"
for t in my_print_defaults mariadb-install-db resolveip; do
  cp "/usr/bin/$t" "$DBRIG_PREFIX/bin/"
done
cp -r /usr/share/mysql "$DBRIG_PREFIX/share/mysql"
cp -r /usr/lib/mysql/plugin "$DBRIG_PREFIX/lib64/mysql/plugin"
echo "installed $(/usr/sbin/mariadbd --version) into $DBRIG_PREFIX (RPM layout, CFLAGS=$CFLAGS)"
