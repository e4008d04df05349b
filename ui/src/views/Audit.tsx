// The audit trail: its state, records per day (a bar chart: click a day to filter the
// table to it), verification with progress and cancel, filters, export.
import { useVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { CheckpointView, DayCount, ExportFormat, Query, RecordView, Verdict } from "../bindings";
import { BarChart, type BarSpec } from "../charts/Chart";
import { Badge, Dialog, EmptyState, ErrorBox, ProgressBar } from "../components";
import { findingText, useFormat } from "../i18n";
import { api, newJobId } from "../ipc";
import { useAudit, useJumps, useNavigate, useToast } from "../state";
import { useCommand } from "../useCommand";

const PAGE = 200;
const ROW = 32;

/// Days shown in the records-per-day chart; successes in the first series colour, failures red.
const DAYS = 30;
const DAY_COLORS: BarSpec["colors"] = [0, "bad"];

function VerdictBox({ v }: { v: Verdict }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  if (v.verdict === "intact") {
    return (
      <div className="verdict ok" role="status" data-testid="verdict" data-verdict="intact">
        <strong>{t("audit.intact")}</strong> {t("audit.intact_detail", { records: fmt.number(v.records), checkpoints: v.checkpoints })}
        {v.last_checkpoint
          ? t("audit.intact_last_checkpoint", {
              no: v.last_checkpoint.checkpoint_no,
              time: fmt.dateTime(v.last_checkpoint.time),
              algorithm: v.last_checkpoint.algorithm,
            })
          : ""}
        .{!v.key_pinned && ` ${t("audit.key_from_store")}`}
      </div>
    );
  }
  return (
    <div className="verdict bad" role="alert" data-testid="verdict" data-verdict="broken">
      <strong>{t("audit.broken_at", { seq: v.first_bad_seq })}</strong> {findingText(v.finding, v.explanation)}
      <div className="muted small">
        {t("audit.finding", { kind: t(`audit.finding_kinds.${v.finding.kind}`), checked: fmt.number(v.records_checked) })}
      </div>
    </div>
  );
}

/// Records per day, failures in their own colour; a click on a day filters the table to it.
function DaysChart({ days, day, onDay }: { days: DayCount[]; day: string | null; onDay: (d: string | null) => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const label = (d: string) =>
    fmt
      .date(`${d}T12:00:00Z`)
      .replace(/,? \d{4}$/, "")
      .replace(/^\d{4}\D/, "");
  return (
    <BarChart
      testId="audit-days"
      exportName="audit-records-per-day"
      lines={11}
      spec={{
        title: t("audit.per_day_title", { days: days.length }),
        x: { label: t("audit.per_day_x"), format: (v) => String(v) },
        y: { label: t("audit.per_day_y"), format: (v) => fmt.number(v) },
        bars: days.map((d) => ({ label: label(d.day), values: [d.records - d.failures, d.failures] })),
        names: [t("audit.per_day_ok"), t("audit.per_day_failed")],
        colors: DAY_COLORS,
      }}
      selected={day ? days.findIndex((d) => d.day === day) : null}
      onSelect={(i) => onDay(i === null ? null : (days[i]?.day ?? null))}
    />
  );
}

function Metadata({ json }: { json: string }) {
  let text = json;
  try {
    text = JSON.stringify(JSON.parse(json), null, 1).replace(/\n\s*/g, " ");
  } catch {
    /* stored as it was written */
  }
  return (
    <span className="mono ellipsis" title={text}>
      {text === "{}" ? "" : text}
    </span>
  );
}

function toIso(local: string, end: boolean): string | null {
  if (!local) return null;
  const d = new Date(local);
  if (Number.isNaN(d.getTime())) return null;
  if (end && local.length <= 10) d.setHours(23, 59, 59, 999);
  return d.toISOString();
}

function keyIdOf(r: RecordView): string | null {
  try {
    const m = JSON.parse(r.metadata) as Record<string, unknown>;
    const id = m.key_id ?? m.id ?? (m.key as Record<string, unknown> | undefined)?.id;
    return typeof id === "string" && id ? id : null;
  } catch {
    return null;
  }
}

/// The signed file and its first signature, for a "sign" record.
function signedFileOf(r: RecordView): { file: string; sig: string } | null {
  if (r.action !== "sign" || r.status !== "success") return null;
  try {
    const m = JSON.parse(r.metadata) as Record<string, unknown>;
    const outputs = Array.isArray(m.outputs) ? m.outputs.filter((o): o is string => typeof o === "string") : [];
    return typeof m.path === "string" && outputs[0] ? { file: m.path, sig: outputs[0] } : null;
  } catch {
    return null;
  }
}

function RecordDetail({ r, onClose }: { r: RecordView; onClose: () => void }) {
  const { t } = useTranslation();
  const { showKeys, showVerify } = useJumps();
  const keyId = keyIdOf(r);
  const signed = signedFileOf(r);
  let meta = r.metadata;
  try {
    meta = JSON.stringify(JSON.parse(r.metadata), null, 2);
  } catch {
    /* shown as stored */
  }
  return (
    <aside className="detail-pane record-detail" data-testid="record-detail">
      <header className="card-header">
        <h2>{t("audit.record", { seq: r.seq })}</h2>
        <button className="icon-button" onClick={onClose} aria-label={t("audit.close_record")}>
          ×
        </button>
      </header>
      <dl className="info-grid">
        {(
          [
            [t("audit.col_time"), r.timestamp],
            [t("audit.col_action"), r.action],
            [t("audit.col_status"), r.status],
            [t("audit.col_resource"), `${r.resource_type}${r.resource_id ? `: ${r.resource_id}` : ""}`],
            [t("audit.col_algorithm"), r.algorithm ?? "—"],
            [t("audit.col_error_code"), r.error_code ?? "—"],
            [t("audit.col_actor"), `${r.actor_id ?? "?"} (${r.actor_ip})`],
            [t("audit.col_session"), r.session_id],
            [t("audit.col_epoch"), String(r.epoch)],
          ] as const
        ).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <h3>{t("audit.chain_value")}</h3>
      <code className="hex">{r.hmac_chain}</code>
      <h3>{t("audit.metadata")}</h3>
      <pre className="meta">{meta}</pre>
      {keyId && (
        <button onClick={() => showKeys(keyId)} data-testid="record-key">
          {t("audit.show_key", { id: keyId.slice(0, 12) })}
        </button>
      )}
      {signed && (
        <button onClick={() => showVerify(signed)} data-testid="record-signed-file" title={signed.file}>
          {t("audit.check_signed_file")}
        </button>
      )}
    </aside>
  );
}

export function AuditView() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { audit, auditTick } = useAudit();
  const { auditSearch, auditTarget, consumeAuditTarget } = useJumps();
  const navigate = useNavigate();
  const toast = useToast();
  const [records, setRecords] = useState<RecordView[] | null>(null);
  const [more, setMore] = useState(true);
  const [action, setAction] = useState("");
  const [status, setStatus] = useState("");
  const [text, setText] = useState(auditSearch);
  const [actor, setActor] = useState("");
  const [from, setFrom] = useState(auditTarget?.day ?? "");
  const [to, setTo] = useState(auditTarget?.day ?? "");
  const [days, setDays] = useState<DayCount[] | null>(null);
  // The Overview's target is read once (above, and the record below); the next visit starts unfiltered.
  useEffect(() => {
    if (auditTarget) consumeAuditTarget();
  }, [auditTarget, consumeAuditTarget]);
  const [selected, setSelected] = useState<RecordView | null>(null);
  const [checkpoints, setCheckpoints] = useState<CheckpointView[] | null>(null);
  const [rotate, setRotate] = useState(false);
  const [verify, setVerify] = useState<{ job: string; done: number; total: number } | null>(null);
  const parentRef = useRef<HTMLDivElement>(null);

  const query = useCallback(
    (before: number | null) => ({
      before_seq: before,
      after_seq: null,
      limit: PAGE,
      from_time: toIso(from, false),
      to_time: toIso(to, true),
      actor: actor.trim() || null,
      action: action || null,
      status: status || null,
      resource: null,
      text: text.trim() || null,
      ascending: false,
    }),
    [action, status, text, actor, from, to],
  );

  // A page of records: the newest (no `before_seq`: it replaces the table) or an older one.
  const { run: fetchPage, error } = useCommand(
    async (q: Query) => {
      const r = await api.auditRecords(q);
      setRecords((old) => (q.before_seq === null ? r : [...(old ?? []), ...r]));
      setMore(r.length === PAGE);
    },
    { keepError: true },
  );
  const load = useCallback(() => fetchPage(query(null)), [fetchPage, query]);

  useEffect(() => {
    void load();
  }, [load, auditTick]);

  useEffect(() => {
    let live = true;
    api.auditDays(DAYS).then(
      (d) => live && setDays(d),
      () => live && setDays(null),
    );
    return () => {
      live = false;
    };
  }, [auditTick]);
  // A click on a day filters the table to it (again: back to every day).
  const pickDay = (d: string | null) => {
    setFrom(d ?? "");
    setTo(d ?? "");
  };
  const chartDay = from && from === to ? from : null;

  // Every checkpoint's signature is checked in Rust: reload when there is a new one or the
  // key's holder logs in or out, not on every record.
  const checkpointCount = audit?.checkpoints;
  const keyState = audit?.key.state;
  useEffect(() => {
    let live = true;
    api.auditCheckpoints().then(
      (c) => live && setCheckpoints(c),
      () => live && setCheckpoints(null),
    );
    return () => {
      live = false;
    };
  }, [checkpointCount, keyState]);

  // Verifying the whole trail, with progress (`verify`) and cancel.
  const verifying = useCommand(async (job: string) => {
    try {
      return await api.auditVerify(job, (e) => {
        if (e.kind === "progress") setVerify({ job, done: e.done, total: e.total });
      });
    } finally {
      setVerify(null);
    }
  });
  const { data: verdict, error: verifyError } = verifying;

  const badSeq = verdict?.verdict === "broken" ? verdict.first_bad_seq : null;
  // A record the Overview pointed at: selected and scrolled to once it is in the table.
  const [target, setTarget] = useState(auditTarget?.seq ?? null);
  useEffect(() => {
    if (target === null || !records) return;
    const i = records.findIndex((r) => r.seq === target);
    if (i < 0) return;
    virtRef.current?.scrollToIndex(i, { align: "center" });
    setSelected(records[i]!);
    setTarget(null);
  }, [target, records]);
  const showBad = useCallback(
    (seq: number) => {
      const i = records?.findIndex((r) => r.seq === seq) ?? -1;
      if (i >= 0) virtRef.current?.scrollToIndex(i, { align: "center" });
    },
    [records],
  );
  const virtRef = useRef<{ scrollToIndex: (i: number, o: { align: "center" }) => void } | null>(null);
  useEffect(() => {
    if (badSeq !== null) showBad(badSeq);
  }, [badSeq, showBad]);

  const { run: exportKey } = useCommand(
    async () => {
      const pem = await api.auditPublicKey();
      const p = await api.saveExport("audit-checkpoint-key.pem", "pem", { text: pem });
      if (p) toast("ok", t("common.saved", { path: p }));
    },
    { errorToast: t("common.export_failed") },
  );
  const { run: doRotate } = useCommand(
    async () => {
      const epoch = await api.auditRotateKey();
      toast("ok", t("audit.rotated", { epoch }));
      setRotate(false);
    },
    { errorToast: t("audit.not_rotated") },
  );

  const older = useCallback(async () => {
    const last = records?.[records.length - 1];
    if (last) await fetchPage(query(last.seq));
  }, [records, query, fetchPage]);

  const runVerify = async () => {
    const job = newJobId();
    setVerify({ job, done: 0, total: 0 });
    verifying.reset();
    await verifying.run(job);
  };

  const { run: exportTrail } = useCommand(
    async (format: ExportFormat) => {
      // The date filter, when set, is the exported range; otherwise the whole trail.
      const s = await api.auditExport(format, { from_time: toIso(from, false), to_time: toIso(to, true) });
      if (s) toast("ok", t("audit.exported", { count: s.records, records: fmt.number(s.records), path: s.path }));
    },
    { errorToast: t("common.export_failed") },
  );

  const { run: checkpoint } = useCommand(
    async () => {
      const c = await api.auditCheckpoint();
      toast("ok", t("audit.checkpoint_signed", { no: c.checkpoint_no, algorithm: c.algorithm, seq: c.seq }));
    },
    { errorToast: t("audit.no_checkpoint") },
  );

  // eslint-disable-next-line react-hooks/incompatible-library -- TanStack Virtual's API cannot be memoized by the React compiler; this table re-renders on scroll by design.
  const virt = useVirtualizer({
    count: records?.length ?? 0,
    getScrollElement: () => parentRef.current,
    estimateSize: () => ROW,
    overscan: 10,
  });
  virtRef.current = virt;
  // Older pages load as the table nears its end, so 100,000 records scroll like one list.
  const lastShown = virt.getVirtualItems().at(-1)?.index ?? 0;
  const loadingOlder = useRef(false);
  useEffect(() => {
    if (!more || !records || loadingOlder.current || lastShown < records.length - 40) return;
    loadingOlder.current = true;
    void older().finally(() => {
      loadingOlder.current = false;
    });
  }, [lastShown, more, records, older]);
  const unlocked = audit?.key.state === "unlocked";

  return (
    <div className="view audit-view">
      <header className="view-header">
        <h1>{t("audit.title")}</h1>
        <div className="button-row">
          <button
            onClick={() => void exportTrail("jsonl")}
            data-testid="export-jsonl"
            title={from || to ? t("audit.export_range_title") : t("audit.export_all_title")}
          >
            {from || to ? t("audit.export_jsonl_range") : t("audit.export_jsonl")}
          </button>
          <button onClick={() => void exportTrail("csv")} data-testid="export-csv">
            {from || to ? t("audit.export_csv_range") : t("audit.export_csv")}
          </button>
          <button onClick={() => void checkpoint()} disabled={!unlocked}>
            {t("audit.checkpoint_now")}
          </button>
          <button onClick={() => setRotate(true)} disabled={!unlocked} data-testid="rotate-key">
            {t("audit.rotate_key")}
          </button>
          <button
            className="primary"
            onClick={() => void runVerify()}
            disabled={!!verify || !unlocked}
            data-testid="verify-trail"
            title={unlocked ? t("audit.verify_title") : t("audit.verify_locked_title")}
          >
            {t("audit.verify_trail")}
          </button>
        </div>
      </header>
      {audit && (
        <dl className="info-grid audit-status" data-testid="audit-status">
          <div>
            <dt>{t("audit.store")}</dt>
            <dd>
              {audit.store} · {audit.location}
            </dd>
          </div>
          <div>
            <dt>{t("audit.trail")}</dt>
            <dd className="mono">{audit.log_id}</dd>
          </div>
          <div>
            <dt>{t("audit.key")}</dt>
            <dd>
              {audit.key.state === "unlocked" ? (
                <Badge tone="ok">{t("audit.key_unlocked", { epoch: audit.key.epoch, holder: audit.key.holder })}</Badge>
              ) : audit.key.state === "locked" ? (
                <Badge tone="warn">{t("audit.key_locked", { holder: audit.key.holder })}</Badge>
              ) : (
                <Badge tone="warn">{t("audit.key_none")}</Badge>
              )}
            </dd>
          </div>
          <div>
            <dt>{t("audit.records")}</dt>
            <dd>
              {fmt.number(audit.records)}
              {audit.pending > 0 && ` ${t("audit.pending", { count: audit.pending })}`}
            </dd>
          </div>
          <div>
            <dt>{t("audit.last_verification")}</dt>
            <dd data-testid="last-verification">
              {audit.last_verification ? (
                <>
                  <Badge tone={audit.last_verification.intact ? "ok" : "bad"}>
                    {audit.last_verification.intact
                      ? t("audit.lv_intact")
                      : t("audit.lv_broken", { seq: audit.last_verification.first_bad_seq })}
                  </Badge>{" "}
                  {fmt.dateTime(audit.last_verification.at)} ({t(`audit.trigger_${audit.last_verification.trigger}`)})
                </>
              ) : (
                t("audit.lv_none")
              )}
              <div className="muted small">{t("audit.automatic", { schedule: t(`settings.auto_verify_${audit.auto_verify}`) })}</div>
            </dd>
          </div>
          <div>
            <dt>{t("audit.checkpoints")}</dt>
            <dd>
              {audit.checkpoints}
              {audit.last_checkpoint_time &&
                ` · ${t("audit.last_checkpoint", { time: audit.last_checkpoint_time, seq: audit.last_checkpoint_seq })}`}
            </dd>
          </div>
        </dl>
      )}
      {!unlocked && audit && (
        <div className="notice">
          {t("audit.needs_key")} <button onClick={() => navigate("connections")}>{t("audit.log_in")}</button>
        </div>
      )}
      {verify && (
        <div className="inline-form">
          <ProgressBar
            done={verify.done}
            total={verify.total}
            label={
              verify.total > 0
                ? t("audit.verifying_n", { done: fmt.number(verify.done), total: fmt.number(verify.total) })
                : t("audit.verifying")
            }
          />
          <button onClick={() => void api.cancelJob(verify.job)} data-testid="cancel-verify">
            {t("common.cancel")}
          </button>
        </div>
      )}
      {verdict && <VerdictBox v={verdict} />}
      {verifyError && <ErrorBox error={verifyError} title={t("audit.verify_unfinished")} />}
      {days && <DaysChart days={days} day={chartDay} onDay={pickDay} />}
      <div className="filters">
        <input
          type="search"
          placeholder={t("audit.search_placeholder")}
          value={text}
          onChange={(e) => setText(e.target.value)}
          aria-label={t("audit.search_label")}
          data-testid="audit-search"
        />
        <input
          type="text"
          placeholder={t("audit.action_placeholder")}
          value={action}
          onChange={(e) => setAction(e.target.value)}
          aria-label={t("audit.action_label")}
        />
        <input
          type="text"
          placeholder={t("audit.actor_label")}
          value={actor}
          onChange={(e) => setActor(e.target.value)}
          aria-label={t("audit.actor_label")}
        />
        <label className="inline-form small">
          {t("audit.from")}{" "}
          <input
            type="date"
            value={from}
            onChange={(e) => setFrom(e.target.value)}
            aria-label={t("audit.from_label")}
            data-testid="audit-from"
          />
        </label>
        <label className="inline-form small">
          {t("audit.to")} <input type="date" value={to} onChange={(e) => setTo(e.target.value)} aria-label={t("audit.to_label")} />
        </label>
        <select value={status} onChange={(e) => setStatus(e.target.value)} aria-label={t("audit.status_label")}>
          <option value="">{t("audit.any_status")}</option>
          <option value="success">{t("audit.status_success")}</option>
          <option value="failure">{t("audit.status_failure")}</option>
          <option value="warning">{t("audit.status_warning")}</option>
          <option value="unknown">{t("audit.status_unknown")}</option>
        </select>
      </div>
      {error && <ErrorBox error={error} />}
      {records && records.length === 0 ? (
        <EmptyState title={t("audit.no_records")}>
          {action || status || text || actor || from || to ? t("audit.no_match") : t("audit.empty")}
        </EmptyState>
      ) : (
        <div className={selected ? "split" : undefined}>
          <div className="record-table" role="grid" aria-label={t("audit.records_label")} data-testid="audit-records">
            <div className="record-row record-head" role="row">
              <span role="columnheader">#</span>
              <span role="columnheader">{t("audit.col_time")}</span>
              <span role="columnheader">{t("audit.col_action")}</span>
              <span role="columnheader">{t("audit.col_resource")}</span>
              <span role="columnheader">{t("audit.col_status")}</span>
              <span role="columnheader">{t("audit.col_actor")}</span>
              <span role="columnheader">{t("audit.col_details")}</span>
            </div>
            {/* The records' row group, focusable so that they scroll from the keyboard too (they
                hold no control that would take the focus). */}
            <div className="record-scroll" role="rowgroup" ref={parentRef} tabIndex={0}>
              <div style={{ height: virt.getTotalSize(), position: "relative" }}>
                {virt.getVirtualItems().map((v) => {
                  const r = records![v.index]!;
                  return (
                    <div
                      key={r.seq}
                      role="row"
                      className={`record-row status-${r.status}${r.seq === badSeq ? " bad-record" : ""}${selected?.seq === r.seq ? " active" : ""}`}
                      style={{ position: "absolute", top: 0, left: 0, right: 0, height: ROW, transform: `translateY(${v.start}px)` }}
                      data-action={r.action}
                      data-seq={r.seq}
                      data-bad={r.seq === badSeq ? "true" : undefined}
                      data-testid="audit-row"
                      onClick={() => setSelected(r)}
                    >
                      <span role="gridcell">{r.seq}</span>
                      <span role="gridcell" className="mono">
                        {r.timestamp.replace("T", " ").replace("Z", "")}
                      </span>
                      <span role="gridcell">{r.action}</span>
                      <span role="gridcell" className="ellipsis" title={r.resource_id ?? ""}>
                        {r.resource_id}
                      </span>
                      <span role="gridcell">
                        <Badge tone={r.status === "success" ? "ok" : r.status === "failure" ? "bad" : "warn"}>
                          {r.status === "success" || r.status === "failure" || r.status === "warning" || r.status === "unknown"
                            ? t(`audit.status_${r.status}`)
                            : r.status}
                        </Badge>
                      </span>
                      <span role="gridcell" className="ellipsis">
                        {r.actor_id}
                      </span>
                      <span role="gridcell">
                        <Metadata json={r.metadata} />
                      </span>
                    </div>
                  );
                })}
              </div>
            </div>
            {/* A grid holds only rows: the button for older records is a row's one cell. */}
            {more && (
              <div role="row">
                <div role="gridcell" aria-colspan={7} className="load-more-cell">
                  <button onClick={() => void older()} className="load-more">
                    {t("audit.load_older")}
                  </button>
                </div>
              </div>
            )}
          </div>
          {selected && <RecordDetail r={selected} onClose={() => setSelected(null)} />}
        </div>
      )}
      <section className="card" data-testid="checkpoints">
        <header className="card-header">
          <h2>{t("audit.checkpoints")}</h2>
          <button onClick={() => void exportKey()}>{t("audit.export_key")}</button>
        </header>
        {checkpoints && checkpoints.length > 0 ? (
          <table className="table compact">
            <thead>
              <tr>
                <th>#</th>
                <th>{t("audit.cp_up_to")}</th>
                <th>{t("audit.col_time")}</th>
                <th>{t("audit.col_epoch")}</th>
                <th>{t("audit.col_algorithm")}</th>
                <th>{t("audit.key")}</th>
                <th>{t("audit.cp_signature")}</th>
              </tr>
            </thead>
            <tbody>
              {checkpoints
                .slice()
                .reverse()
                .slice(0, 200)
                .map((c) => (
                  <tr key={c.checkpoint_no}>
                    <td>{c.checkpoint_no}</td>
                    <td>{c.seq}</td>
                    <td>{c.time}</td>
                    <td>{c.epoch}</td>
                    <td>{c.algorithm}</td>
                    <td className="mono small" title={c.key_fingerprint}>
                      {c.key_fingerprint.slice(0, 20)}…{" "}
                      {c.key_is_hsm_key === true ? (
                        <Badge tone="ok">{t("audit.cp_hsm_key")}</Badge>
                      ) : c.key_is_hsm_key === false ? (
                        <Badge tone="bad">{t("audit.cp_not_hsm_key")}</Badge>
                      ) : null}
                    </td>
                    <td>
                      {c.signature_valid ? (
                        <Badge tone="ok">{t("audit.cp_valid")}</Badge>
                      ) : (
                        <Badge tone="bad">{c.problem ?? t("audit.cp_invalid")}</Badge>
                      )}
                    </td>
                  </tr>
                ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">{t("audit.no_checkpoint_yet")}</p>
        )}
      </section>
      {rotate && (
        <Dialog
          title={t("audit.rotate_title")}
          onClose={() => setRotate(false)}
          footer={
            <>
              <button onClick={() => setRotate(false)}>{t("common.cancel")}</button>
              <button className="primary" onClick={() => void doRotate()} data-testid="rotate-confirm">
                {t("audit.rotate")}
              </button>
            </>
          }
        >
          <p>{t("audit.rotate_text")}</p>
        </Dialog>
      )}
    </div>
  );
}
