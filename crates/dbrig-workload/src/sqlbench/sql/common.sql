-- sql-bench's database of its own: dbrig creates it, marks it with a registered table, and
-- drops it whole on cleanup once every table in it is proven dbrig's.

-- name: create_marker
CREATE TABLE dbrig_sqlbench (created_by VARCHAR(16) NOT NULL)
