// The figures of one statistics sample: the token's (any module), Luna's CA_* statistics
// and utilization where offered, and the console's own pool and call metrics.
import { useTranslation } from "react-i18next";
import type { StatsSnapshot } from "../../bindings";
import { Badge } from "../../components";
import { useFormat } from "../../i18n";

export function StatsCards({ snap }: { snap: StatsSnapshot }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const tk = snap.token;
  const l = snap.luna;
  const memory = (free: number | null, total: number | null) =>
    total === null ? t("stats.not_reported") : t("stats.free_of", { free: fmt.bytes(free), total: fmt.bytes(total) });
  return (
    <div className="cards" data-testid="stats-cards">
      <section className="card">
        <h2>{t("stats.token")}</h2>
        <dl className="info-grid">
          <div>
            <dt>{t("stats.library")}</dt>
            <dd>{`${snap.manufacturer} · ${snap.library} · Cryptoki ${snap.cryptoki_version}`}</dd>
          </div>
          <div>
            <dt>{t("stats.sessions")}</dt>
            <dd>
              {t("stats.sessions_value", {
                count: tk.session_count ?? 0,
                n: tk.session_count ?? "?",
                max: tk.max_session_count ?? t("stats.unlimited"),
                rw: tk.rw_session_count ?? "?",
              })}
            </dd>
          </div>
          <div>
            <dt>{t("stats.public_memory")}</dt>
            <dd>{memory(tk.free_public_memory, tk.total_public_memory)}</dd>
          </div>
          <div>
            <dt>{t("stats.private_memory")}</dt>
            <dd>{memory(tk.free_private_memory, tk.total_private_memory)}</dd>
          </div>
          <div>
            <dt>{t("stats.mechanisms")}</dt>
            <dd>{snap.mechanism_count}</dd>
          </div>
          <div>
            <dt>{t("stats.pin")}</dt>
            <dd>
              {tk.user_pin_locked ? (
                <Badge tone="bad">{t("stats.pin_locked")}</Badge>
              ) : tk.user_pin_final_try ? (
                <Badge tone="bad">{t("stats.pin_final_try")}</Badge>
              ) : tk.user_pin_count_low ? (
                <Badge tone="warn">{t("stats.pin_count_low")}</Badge>
              ) : (
                <Badge tone="ok">{t("stats.pin_ok")}</Badge>
              )}
            </dd>
          </div>
        </dl>
      </section>
      <section className="card" data-testid="stats-luna">
        <h2>{t("stats.luna")}</h2>
        {l ? (
          <>
            <dl className="info-grid">
              <div>
                <dt>{t("stats.busy")}</dt>
                <dd data-testid="busy">{l.busy_percent !== null ? fmt.percent(l.busy_percent) : t("stats.measuring")}</dd>
              </div>
              <div>
                <dt>{t("stats.commands")}</dt>
                <dd>
                  {l.commands === null ? "?" : fmt.number(l.commands)}
                  {l.commands_per_second !== null && ` (${t("stats.per_second", { rate: fmt.number(l.commands_per_second, 1) })})`}
                </dd>
              </div>
              <div>
                <dt>{t("stats.firmware")}</dt>
                <dd>{l.firmware ?? "—"}</dd>
              </div>
              <div>
                <dt>{t("stats.hsm_storage")}</dt>
                <dd>
                  {l.hsm_storage ? t("stats.used_of", { used: fmt.bytes(l.hsm_storage.used), total: fmt.bytes(l.hsm_storage.total) }) : "—"}
                </dd>
              </div>
            </dl>
            <table className="table compact" data-testid="utilization">
              <thead>
                <tr>
                  <th>{t("stats.requests")}</th>
                  <th>{t("stats.count")}</th>
                  <th>{t("stats.per_second_header")}</th>
                </tr>
              </thead>
              <tbody>
                {l.utilization.map((b) => (
                  <tr key={b.bin}>
                    <td>{b.bin}</td>
                    <td>{fmt.number(b.count)}</td>
                    <td>{b.per_second !== null ? fmt.number(b.per_second, 2) : "…"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {l.not_offered.length > 0 && <p className="muted small">{t("stats.not_offered_list", { list: l.not_offered.join(", ") })}</p>}
          </>
        ) : (
          <p className="muted">{t("stats.not_luna")}</p>
        )}
      </section>
      <section className="card">
        <h2>{t("stats.console")}</h2>
        <p>
          {t("stats.pool_line", { open: snap.pool.open, size: snap.pool.size, in_use: snap.pool.in_use })}{" "}
          <Badge tone={snap.pool.breaker === "closed" ? "ok" : "bad"}>{t(`overview.breaker_${snap.pool.breaker}`)}</Badge>
          {"; "}
          {t("stats.recoveries", {
            recoveries: snap.metrics.module_recoveries,
            reopens: snap.metrics.session_reopens,
            recovered: snap.metrics.recovered_calls,
          })}
        </p>
        <table className="table compact" data-testid="console-ops">
          <thead>
            <tr>
              <th>{t("stats.operation")}</th>
              <th>{t("stats.ok")}</th>
              <th>{t("stats.errors")}</th>
              <th>p50 µs</th>
              <th>p95 µs</th>
              <th>p99 µs</th>
            </tr>
          </thead>
          <tbody>
            {snap.metrics.ops.map((o) => (
              <tr key={o.op}>
                <td>{o.op}</td>
                <td>{o.ok}</td>
                <td>{o.errors}</td>
                <td>{fmt.number(o.p50_us, 0)}</td>
                <td>{fmt.number(o.p95_us, 0)}</td>
                <td>{fmt.number(o.p99_us, 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </div>
  );
}
