-- Run once as the --init-file of a locked-down MariaDB server's first start (before it takes
-- any connection): no anonymous account, root only from this host and only with the secret
-- kept in the server's state folder. {password} is dbrig's random hex secret.
DELETE FROM mysql.global_priv WHERE User = '';
DELETE FROM mysql.global_priv WHERE User = 'root' AND Host NOT IN ('localhost', '127.0.0.1', '::1');
FLUSH PRIVILEGES;
ALTER USER IF EXISTS 'root'@'localhost' IDENTIFIED BY '{password}';
ALTER USER IF EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '{password}';
ALTER USER IF EXISTS 'root'@'::1' IDENTIFIED BY '{password}';
