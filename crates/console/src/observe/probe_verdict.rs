//! A probe sweep's verdict in the officer's language. `bench::probe::SweepVerdict::explain`
//! writes the English (what `hsmc probe` prints); [`verdict_text`] is the same sentence as a
//! [`Text`] with its figures as arguments, tested to read word for word as the English.

use bench::probe::SweepVerdict;

#[cfg(test)]
use crate::core::i18n::InLang;
use crate::core::i18n::Text;
use crate::text;

/// The verdict as a catalog message; its English text is `v.explain()`.
pub fn verdict_text(v: &SweepVerdict) -> Text {
    let n0 = |x: f64| format!("{x:.0}");
    match *v {
        SweepVerdict::Ceiling {
            best_per_s,
            from_workers,
            to_workers,
            from_per_s,
            to_per_s,
            latency_growth,
        } => text!(
            "probes.verdicts.ceiling",
            "Ceiling in the HSM at about {{best}} ops/s: from {{from}} to {{to}} workers throughput stayed flat ({{from_rate}} → {{to_rate}} ops/s) while mean latency grew {{growth}}× — more workers only queue. Add HSMs, not sessions.",
            best = n0(best_per_s),
            from = from_workers,
            to = to_workers,
            from_rate = n0(from_per_s),
            to_rate = n0(to_per_s),
            growth = format!("{latency_growth:.1}")
        ),
        SweepVerdict::Scales {
            workers,
            throughput_per_s,
            efficiency,
            one_worker_per_s,
        } => text!(
            "probes.verdicts.scales",
            "Scales with workers: {{workers}} workers give {{rate}} ops/s, {{percent}} % of {{workers}}× one worker ({{one_rate}} ops/s). No ceiling reached in this sweep.",
            workers = workers,
            rate = n0(throughput_per_s),
            percent = n0(100.0 * efficiency),
            one_rate = n0(one_worker_per_s)
        ),
        SweepVerdict::Shared {
            efficiency,
            workers,
            host_cores,
        } => text!(
            "probes.verdicts.shared",
            "Throughput grows less than the workers ({{percent}} % efficiency at {{workers}} workers); the limit is shared between the HSM and the host (CPU cores of this machine: {{cores}}).",
            percent = n0(100.0 * efficiency),
            workers = workers,
            cores = host_cores
        ),
        SweepVerdict::ClientCeiling {
            best_per_s,
            workers,
            cpu_percent,
            host_cores,
        } => text!(
            "probes.verdicts.client_ceiling",
            "Ceiling on this computer, not in the HSM: at {{workers}} workers the console's process (with any module loaded into it, such as lunasim) used {{percent}} % of this machine's {{cores}} cores while throughput stopped at about {{best}} ops/s. Probe from a machine with more cores, or with the module out of process, before sizing HSMs.",
            workers = workers,
            percent = n0(cpu_percent),
            cores = host_cores,
            best = n0(best_per_s)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::i18n::Lang;

    #[test]
    fn every_verdict_reads_as_bench_writes_it_and_in_each_language() {
        let all = [
            SweepVerdict::Ceiling {
                best_per_s: 65.5,
                from_workers: 2,
                to_workers: 4,
                from_per_s: 65.0,
                to_per_s: 65.4,
                latency_growth: 2.03,
            },
            SweepVerdict::Scales {
                workers: 8,
                throughput_per_s: 7600.2,
                efficiency: 0.95,
                one_worker_per_s: 1000.0,
            },
            SweepVerdict::Shared {
                efficiency: 0.5,
                workers: 4,
                host_cores: 2,
            },
            SweepVerdict::ClientCeiling {
                best_per_s: 812.4,
                workers: 4,
                cpu_percent: 96.2,
                host_cores: 2,
            },
        ];
        for v in &all {
            let t = verdict_text(v);
            assert_eq!(t.text, v.explain());
            for lang in [Lang::ZhHant, Lang::ZhHans] {
                let s = t.in_lang(lang);
                assert_ne!(s, t.text, "{} in {}", t.key, lang.tag());
                for a in t.args.values() {
                    assert!(s.contains(a.as_str()), "{a} in {s}");
                }
            }
        }
    }
}
