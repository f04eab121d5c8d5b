-- dbrig results database, schema version 3: an invalid trial is redone by resume.
--
-- A trial whose server restarted or died is `invalid`: it measured nothing usable and leaves its
-- cell a trial short, so `--resume` runs that trial number again. The finished-once rule now
-- covers `done` results only; invalid attempts stay as history beside the redone one.

DROP INDEX trial_finished_once;
CREATE UNIQUE INDEX trial_finished_once ON trial (cell_id, trial_no) WHERE status = 'done';
