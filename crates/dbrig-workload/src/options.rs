//! Options shared by every workload run: how many clients, for how long, at what rate, with
//! which key distribution. One struct serves the CLI (`clap::Args`, doc comments are the help)
//! and plan files (`serde`, the same names with dashes).

use std::time::Duration;

use clap::Args;
use dbrig_core::limits;
use dbrig_core::results::Protocol;
use dbrig_core::{ArrivalSchedule, KeyDistribution, ValueError};
use serde::{Deserialize, Serialize};

use crate::WorkloadError;

fn parse_protocol(s: &str) -> Result<Protocol, ValueError> {
    s.parse()
}

/// Parse sysbench-style booleans: on/off, true/false, yes/no, 1/0.
pub fn parse_bool(s: &str) -> Result<bool, ValueError> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(ValueError::NotABoolean(s.to_owned())),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum PsMode {
    /// Server-side prepared statements where the driver supports them.
    Auto,
    /// Plain text statements with values inlined as literals.
    Disable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum RateSchedule {
    /// Exponential gaps between arrivals (sysbench's --rate).
    Poisson,
    /// Evenly spaced arrivals.
    Fixed,
}

/// How a run is driven.
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct RunOptions {
    /// Number of clients (connections), each running events one after another.
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::Clients>)]
    #[serde(deserialize_with = "limits::de::<limits::Clients, _>")]
    pub threads: u32,
    /// Stop after this many events in total (0 = no limit).
    #[arg(long, default_value_t = 0, value_parser = limits::parse::<limits::Events>)]
    #[serde(deserialize_with = "limits::de::<limits::Events, _>")]
    pub events: u64,
    /// Stop after this many seconds of measurement (0 = no limit; needs --events then).
    #[arg(long, default_value_t = 10.0, value_parser = limits::parse::<limits::RunSeconds>)]
    #[serde(deserialize_with = "limits::de::<limits::RunSeconds, _>")]
    pub time: f64,
    /// Seconds of load before measurement starts; never counted (sysbench's --warmup-time).
    #[arg(long, alias = "warmup-time", default_value_t = 0.0, value_parser = limits::parse::<limits::WarmupSeconds>)]
    #[serde(deserialize_with = "limits::de::<limits::WarmupSeconds, _>")]
    pub warmup: f64,
    /// Open loop: events per second in total (0 = closed loop). Latency is measured from each
    /// event's intended start; falling behind is reported, never an abort.
    #[arg(long, default_value_t = 0.0, value_parser = limits::parse::<limits::EventRate>)]
    #[serde(deserialize_with = "limits::de::<limits::EventRate, _>")]
    pub rate: f64,
    /// Arrival schedule in open loop.
    #[arg(long, value_enum, default_value_t = RateSchedule::Poisson)]
    pub rate_schedule: RateSchedule,
    /// Milliseconds (0 = none): events whose latency exceeds it are counted as late; in open
    /// loop an event already this late when a client could start it is skipped and counted
    /// (pgbench's -L).
    #[arg(long, default_value_t = 0.0, value_parser = limits::parse::<limits::LatencyLimitMs>)]
    #[serde(deserialize_with = "limits::de::<limits::LatencyLimitMs, _>")]
    pub latency_limit: f64,
    /// Print a sysbench-style line every N seconds (0 = none; samples are stored every second
    /// either way).
    #[arg(long, default_value_t = 0.0, value_parser = limits::parse::<limits::IntervalSeconds>)]
    #[serde(deserialize_with = "limits::de::<limits::IntervalSeconds, _>")]
    pub report_interval: f64,
    /// Latency percentile shown in the sysbench block and interval lines.
    #[arg(long, default_value_t = 95.0, value_parser = limits::parse::<limits::Percentile>)]
    #[serde(deserialize_with = "limits::de::<limits::Percentile, _>")]
    pub percentile: f64,
    /// Key distribution for row ids.
    #[arg(long, value_enum, default_value_t = RandType::Uniform)]
    pub rand_type: RandType,
    /// Seed of all random choices (0 = from the clock; the seed used is stored and printed).
    /// Scripts' `random()` and friends and `:random_seed` come from it (pgbench's
    /// --random-seed, an alias).
    #[arg(long, alias = "random-seed", default_value_t = 0, value_parser = limits::parse::<limits::Seed>)]
    #[serde(deserialize_with = "limits::de::<limits::Seed, _>")]
    pub rand_seed: u64,
    /// Draws averaged by the gaussian and special distributions.
    #[arg(long, default_value_t = 12, value_parser = limits::parse::<limits::RandSpecIter>)]
    #[serde(deserialize_with = "limits::de::<limits::RandSpecIter, _>")]
    pub rand_spec_iter: u32,
    /// special: percentage of keys that are hot.
    #[arg(long, default_value_t = 1.0, value_parser = limits::parse::<limits::Percent>)]
    #[serde(deserialize_with = "limits::de::<limits::Percent, _>")]
    pub rand_spec_pct: f64,
    /// special: percentage of accesses that go to the hot keys.
    #[arg(long, default_value_t = 75.0, value_parser = limits::parse::<limits::Percent>)]
    #[serde(deserialize_with = "limits::de::<limits::Percent, _>")]
    pub rand_spec_res: f64,
    /// pareto: shape parameter h.
    #[arg(long, default_value_t = 0.2, value_parser = limits::parse::<limits::ParetoH>)]
    #[serde(deserialize_with = "limits::de::<limits::ParetoH, _>")]
    pub rand_pareto_h: f64,
    /// zipfian: exponent.
    #[arg(long, default_value_t = 0.8, value_parser = limits::parse::<limits::ZipfianExp>)]
    #[serde(deserialize_with = "limits::de::<limits::ZipfianExp, _>")]
    pub rand_zipfian_exp: f64,
    /// MariaDB/MySQL (sysbench's --db-ps-mode): prepared statements (auto, the default) or
    /// plain text statements with the values written in (disable); the same as --protocol
    /// prepared / simple, on every engine and every workload.
    #[arg(long, value_enum)]
    pub ps_mode: Option<PsMode>,
    /// How statements are sent, for every workload (pgbench's -M): simple (text, values
    /// written in; works through PgBouncer's transaction mode), extended (PostgreSQL:
    /// unnamed parse/bind/execute in one round trip), prepared (named, once per connection).
    /// Default: prepared, pgbench scripts simple (pgbench's default).
    #[arg(long, value_parser = parse_protocol)]
    pub protocol: Option<Protocol>,
    /// Each client closes its connection and opens a new one every N events (0 = never;
    /// sysbench's --reconnect). The set-up time is reported as connect latency, not in the
    /// events' latency.
    #[arg(long, default_value_t = 0, value_parser = limits::parse::<limits::Reconnect>)]
    #[serde(deserialize_with = "limits::de::<limits::Reconnect, _>")]
    pub reconnect: u64,
    /// Open at most R new connections per second at the start (0 = as fast as the server
    /// takes them), a ramp instead of a connection storm.
    #[arg(long, default_value_t = 0.0, value_parser = limits::parse::<limits::ConnectRate>)]
    #[serde(deserialize_with = "limits::de::<limits::ConnectRate, _>")]
    pub connect_rate: f64,
    /// Open N extra connections that stay idle for the whole run (the "99 % idle" case).
    #[arg(long, default_value_t = 0, value_parser = limits::parse::<limits::IdleClients>)]
    #[serde(deserialize_with = "limits::de::<limits::IdleClients, _>")]
    pub idle_clients: u32,
    /// Error codes that roll back and restart an event (MySQL numbers, PostgreSQL SQLSTATEs,
    /// SQLite result codes), or `all`; sysbench's `--mysql-ignore-errors` is another spelling
    /// (sysbench's pgsql driver has no such option).
    #[arg(long, alias = "mysql-ignore-errors", default_value = dbrig_driver::ErrorPolicy::DEFAULT_RETRYABLE)]
    pub retry_codes: String,
    /// Worker threads driving the clients (0 = automatic: on MariaDB/MySQL up to 64 clients,
    /// one per client making blocking socket calls as sysbench does; otherwise two per CPU and
    /// at least 4, at most the client count, each multiplexing its clients asynchronously; on
    /// PostgreSQL with 8 or more clients per CPU, one per CPU).
    #[arg(long, default_value_t = 0, value_parser = limits::parse::<limits::Workers>)]
    #[serde(deserialize_with = "limits::de::<limits::Workers, _>")]
    pub workers: u32,
    /// Seconds to wait for a connection to open (handshake and authentication included), and
    /// for each reply to dbrig's own questions (probes, evidence, each client's set-up), before
    /// giving up.
    #[arg(long, default_value_t = 10.0, value_parser = limits::parse::<limits::TimeoutSeconds>)]
    #[serde(deserialize_with = "limits::de::<limits::TimeoutSeconds, _>")]
    pub connect_timeout: f64,
    /// Measure data that does not match the options (a table size or secondary index other
    /// than prepared, tables an interrupted prepare left) with a warning instead of refusing.
    #[arg(long)]
    pub allow_data_mismatch: bool,
    /// pgbench's --max-tries (0 = dbrig's own retry: a retryable error restarts the event
    /// until it succeeds, up to 1000 times, then stops the client): an event is tried at most
    /// N times on a retryable error (--retry-codes), then counted as a failed transaction by
    /// kind (serialization, deadlock) and the client goes on.
    #[arg(long, default_value_t = 0, value_parser = limits::parse::<limits::MaxTries>)]
    #[serde(deserialize_with = "limits::de::<limits::MaxTries, _>")]
    pub max_tries: u32,
    /// pgbench's --failures-detailed: the pgbench layout counts failed transactions by kind.
    #[arg(long)]
    pub failures_detailed: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            o: RunOptions,
        }
        Wrap::parse_from(["dbrig"]).o
    }
}

impl RunOptions {
    /// The protocol mode asked for (`--protocol`, or `--ps-mode` spelling the same), or
    /// `default` (the workload's: pgbench scripts are simple, everything else prepared).
    pub fn protocol_or(&self, default: Protocol) -> Protocol {
        match (self.protocol, self.ps_mode) {
            (Some(p), _) => p,
            (None, Some(PsMode::Auto)) => Protocol::Prepared,
            (None, Some(PsMode::Disable)) => Protocol::Simple,
            (None, None) => default,
        }
    }

    /// How every connection of a run is opened: the retry codes, the protocol mode
    /// (`--protocol` / `--ps-mode`; a workload with another default sets its own, see
    /// [`RunOptions::protocol_or`]), the connect timeout.
    pub fn connect_options(&self) -> dbrig_driver::ConnectOptions {
        dbrig_driver::ConnectOptions {
            policy: dbrig_driver::ErrorPolicy::from_list(&self.retry_codes),
            protocol: self.protocol_or(Protocol::Prepared),
            connect_timeout: limits::duration(self.connect_timeout),
            reply_timeout: None,
            lean: false,
            own_thread: None,
            connect_times: None,
        }
    }

    /// The seed of the run's random values: `--rand-seed`, or one from the clock when it is 0.
    pub fn resolved_seed(&self) -> u64 {
        if self.rand_seed != 0 {
            return self.rand_seed;
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(1);
        (nanos as u64 ^ (nanos >> 64) as u64).max(1)
    }

    pub fn key_distribution(&self) -> KeyDistribution {
        match self.rand_type {
            RandType::Uniform => KeyDistribution::Uniform,
            RandType::Gaussian => KeyDistribution::Gaussian {
                iter: self.rand_spec_iter,
            },
            RandType::Special => KeyDistribution::Special {
                iter: self.rand_spec_iter,
                pct: self.rand_spec_pct,
                res: self.rand_spec_res,
            },
            RandType::Pareto => KeyDistribution::Pareto {
                h: self.rand_pareto_h,
            },
            RandType::Zipfian => KeyDistribution::Zipfian {
                exp: self.rand_zipfian_exp,
            },
        }
    }

    /// How the run is driven, as reports say it: `closed loop`, or
    /// `open loop, poisson arrivals at 500/s`.
    pub fn schedule_text(&self) -> String {
        match self.schedule().rate() {
            None => "closed loop".into(),
            Some(r) => {
                format!("open loop, {:?} arrivals at {r}/s", self.rate_schedule).to_lowercase()
            }
        }
    }

    pub fn schedule(&self) -> ArrivalSchedule {
        if self.rate <= 0.0 {
            ArrivalSchedule::Closed
        } else {
            match self.rate_schedule {
                RateSchedule::Poisson => ArrivalSchedule::Poisson { rate: self.rate },
                RateSchedule::Fixed => ArrivalSchedule::Fixed { rate: self.rate },
            }
        }
    }

    pub fn time_limit(&self) -> Option<Duration> {
        (self.time > 0.0).then(|| limits::duration(self.time))
    }

    /// `--latency-limit`, when set.
    pub fn latency_limit(&self) -> Option<Duration> {
        (self.latency_limit > 0.0).then(|| limits::duration(self.latency_limit / 1000.0))
    }

    pub fn event_limit(&self) -> Option<u64> {
        (self.events > 0).then_some(self.events)
    }

    /// Check combinations clap cannot check; the message names the option and the fix.
    /// Each value's own range is checked where it is read (`dbrig_core::limits`, for the
    /// command line and plan files alike).
    pub fn validate(&self) -> Result<(), WorkloadError> {
        match (self.protocol, self.ps_mode) {
            (Some(Protocol::Simple), Some(PsMode::Auto))
            | (Some(Protocol::Prepared | Protocol::Extended), Some(PsMode::Disable)) => {
                return Err(WorkloadError::InvalidOptions(format!(
                    "--protocol {} and --ps-mode {} contradict each other: give one of them",
                    self.protocol.map_or("", |p| p.name()),
                    if self.ps_mode == Some(PsMode::Auto) {
                        "auto"
                    } else {
                        "disable"
                    }
                )));
            }
            _ => {}
        }
        if self.time <= 0.0 && self.events == 0 {
            return Err(WorkloadError::InvalidOptions(
                "--time 0 and --events 0 would run forever: set one of them".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key-distribution option reaches the distribution the run draws from, each away
    /// from its default (a parameter read from another's option, or dropped, shows here).
    #[test]
    fn key_distribution_options_reach_the_distribution() {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            o: RunOptions,
        }
        let dist = |args: &[&str]| {
            Wrap::parse_from(std::iter::once("dbrig").chain(args.iter().copied()))
                .o
                .key_distribution()
        };
        assert_eq!(dist(&[]), KeyDistribution::Uniform);
        assert_eq!(
            dist(&["--rand-type", "gaussian", "--rand-spec-iter", "3"]),
            KeyDistribution::Gaussian { iter: 3 }
        );
        assert_eq!(
            dist(&[
                "--rand-type",
                "special",
                "--rand-spec-iter",
                "5",
                "--rand-spec-pct",
                "4",
                "--rand-spec-res",
                "60",
            ]),
            KeyDistribution::Special {
                iter: 5,
                pct: 4.0,
                res: 60.0
            }
        );
        assert_eq!(
            dist(&["--rand-type", "pareto", "--rand-pareto-h", "0.35"]),
            KeyDistribution::Pareto { h: 0.35 }
        );
        assert_eq!(
            dist(&["--rand-type", "zipfian", "--rand-zipfian-exp", "1.2"]),
            KeyDistribution::Zipfian { exp: 1.2 }
        );
        // sysbench's defaults, where the option is not given.
        assert_eq!(
            dist(&["--rand-type", "special"]),
            KeyDistribution::Special {
                iter: 12,
                pct: 1.0,
                res: 75.0
            }
        );
    }

    /// `--ps-mode` is another spelling of `--protocol`; without either the workload decides;
    /// the two saying different things is refused.
    #[test]
    fn protocol_and_ps_mode_are_one_choice() {
        let o = |protocol, ps_mode| RunOptions {
            protocol,
            ps_mode,
            ..RunOptions::default()
        };
        assert_eq!(
            o(None, None).protocol_or(Protocol::Simple),
            Protocol::Simple
        );
        assert_eq!(o(None, None).connect_options().protocol, Protocol::Prepared);
        assert_eq!(
            o(None, Some(PsMode::Disable)).protocol_or(Protocol::Prepared),
            Protocol::Simple
        );
        assert_eq!(
            o(None, Some(PsMode::Auto)).protocol_or(Protocol::Simple),
            Protocol::Prepared
        );
        assert_eq!(
            o(Some(Protocol::Extended), None).protocol_or(Protocol::Simple),
            Protocol::Extended
        );
        assert!(
            o(Some(Protocol::Simple), Some(PsMode::Disable))
                .validate()
                .is_ok()
        );
        let e = o(Some(Protocol::Extended), Some(PsMode::Disable))
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("contradict"), "{e}");
    }
}
