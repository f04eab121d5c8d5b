#!/bin/sh
# Data-directory initialiser for plans/aria-tmp-groupby.toml: mariadb-install-db with Aria
# pages of 16K. aria_block_size is fixed when the Aria control file and the system tables are
# created, so a server with another page size needs its data directory made with that size
# (a server started with a size its control file does not have refuses to start).
exec mariadb-install-db "$@" --aria-block-size=16384
