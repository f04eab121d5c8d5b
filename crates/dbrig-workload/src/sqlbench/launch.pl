# dbrig's launcher for one sql-bench test: `perl launch.pl TEST ARGS...` in the suite's folder.
# The password comes in DBRIG_SQLBENCH_PASSWORD (removed from the environment at once) and is
# handed to the test inside this process, so it is never on a command line (`ps` shows only
# what dbrig passed). DBRIG_SQLBENCH_HIRES=1 times wallclock in microseconds (Benchmark's
# :hireswallclock) instead of whole seconds.
use strict;
BEGIN {
  if ($ENV{DBRIG_SQLBENCH_HIRES}) {
    require Time::HiRes;
    require Benchmark;
    Benchmark->import(':hireswallclock');
  }
}
my $test = shift @ARGV;
die "usage: perl launch.pl TEST [ARGS]\n" unless defined $test && -f $test;
my $password = delete $ENV{DBRIG_SQLBENCH_PASSWORD};
push @ARGV, "--password=$password" if defined $password && length $password;
$0 = $test;
my $ok = do "./$test";
if (!defined $ok && $@) {
  print STDERR $@;
  exit 1;
}
exit 0;
