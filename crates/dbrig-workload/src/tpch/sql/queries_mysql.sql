-- MariaDB / MySQL variants of the TPC-H queries whose template (queries.sql) does not run as is.
-- Same meaning, checked by the differential answer check across engines.

-- name: q13
-- MariaDB has no column list on a derived table: the count is named inside instead.
select
	c_count,
	count(*) as custdist
from
	(
		select
			c_custkey,
			count(o_orderkey) as c_count
		from
			customer left outer join orders on
				c_custkey = o_custkey
				and o_comment not like '%:1%:2%'
		group by
			c_custkey
	) as c_orders
group by
	c_count
order by
	custdist desc,
	c_count desc
