-- dbrig results database, schema version 4: runs that travel between databases.
--
-- A run's integer id is its number in one database; `uid` is its globally unique id (a UUID;
-- dbrig writes version 7, time-ordered), the same wherever the run is copied, so a copy is
-- idempotent and runs from many machines meet in one database without colliding. Runs of
-- older files get a random (version 4) UUID here. `machine` is the machine the writer ran on,
-- so a run left `running` by a dbrig on another machine is not taken for abandoned (its pid
-- means nothing here); older runs leave it NULL: they were written on this file's machine.

ALTER TABLE run ADD COLUMN uid TEXT;
ALTER TABLE run ADD COLUMN machine TEXT;
UPDATE run SET uid = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
    || substr(lower(hex(randomblob(2))), 2) || '-'
    || substr('89ab', 1 + abs(random()) % 4, 1) || substr(lower(hex(randomblob(2))), 2) || '-'
    || lower(hex(randomblob(6)))
  WHERE uid IS NULL;
CREATE UNIQUE INDEX run_by_uid ON run (uid);
