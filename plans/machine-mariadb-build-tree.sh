#!/bin/sh
# Lays out a stand-in for an out-of-source MariaDB build tree from the machine's own MariaDB
# (the build-tree tests use it; so can anyone trying `build-tree = ...` without compiling):
# SRC/ holds what the source tree gives (scripts/*.sql, sql/share/charsets), BUILD/ what a
# cmake build makes (sql/mariadbd, extra/my_print_defaults, extra/resolveip,
# scripts/mariadb-install-db and its generated SQL, sql/share/english/errmsg.sys) and a
# CMakeCache.txt naming SRC, as `cmake -S SRC -B BUILD && make` would leave them.
#
#   sh plans/machine-mariadb-build-tree.sh /tmp/maria-src /tmp/maria-build
#
#   [[server]]
#   name = "tree"
#   engine = "mariadb"
#   build-tree = "/tmp/maria-build"
set -e
SRC="${1:?usage: machine-mariadb-build-tree.sh SRC BUILD}"
BUILD="${2:?usage: machine-mariadb-build-tree.sh SRC BUILD}"
SHARE=/usr/share/mysql
mkdir -p "$SRC/scripts" "$SRC/sql/share" "$BUILD/sql/share" "$BUILD/extra" "$BUILD/scripts"
# Source tree: the SQL scripts as they are in git, the character sets.
for f in mysql_system_tables.sql mysql_performance_tables.sql mysql_system_tables_data.sql \
  mysql_test_db.sql fill_help_tables.sql mysql_test_data_timezone.sql; do
  cp "$SHARE/$f" "$SRC/scripts/"
done
cp -r "$SHARE/charsets" "$SRC/sql/share/charsets"
# Build tree: what cmake and make generate.
cp /usr/sbin/mariadbd "$BUILD/sql/mariadbd"
cp /usr/bin/my_print_defaults /usr/bin/resolveip "$BUILD/extra/"
cp /usr/bin/mariadb-install-db "$BUILD/scripts/mariadb-install-db"
cp "$SHARE/maria_add_gis_sp_bootstrap.sql" "$SHARE/mysql_sys_schema.sql" "$BUILD/scripts/"
mkdir -p "$BUILD/sql/share/english"
cp "$SHARE/english/errmsg.sys" "$BUILD/sql/share/english/"
CC=$(command -v cc || echo /usr/bin/cc)
cat > "$BUILD/CMakeCache.txt" <<CACHE
# stand-in for the CMakeCache.txt of a MariaDB build tree
CMAKE_HOME_DIRECTORY:INTERNAL=$(cd "$SRC" && pwd)
CMAKE_BUILD_TYPE:STRING=RelWithDebInfo
CMAKE_C_COMPILER:FILEPATH=$CC
CMAKE_C_FLAGS:STRING=
CMAKE_C_FLAGS_RELWITHDEBINFO:STRING=-O3 -g -fno-omit-frame-pointer -fno-strict-aliasing -DNDEBUG -DDBUG_OFF
CACHE
echo "laid out a stand-in build tree of $(/usr/sbin/mariadbd --version) in $BUILD (source $SRC)"
