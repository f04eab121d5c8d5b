-- Run once as the --init-file of a locked-down MySQL server's first start: root only with the
-- secret kept in the server's state folder (--initialize-insecure creates no anonymous
-- account; one left by an older layout is dropped). {password} is dbrig's random hex secret.
DROP USER IF EXISTS ''@'localhost';
ALTER USER IF EXISTS 'root'@'localhost' IDENTIFIED BY '{password}';
