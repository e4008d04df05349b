// The audit trail: its state, records per day (a bar chart: click a day to filter the
// table to it), verification with progress and cancel, filters, export.
import { useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { CheckpointView, DayCount, ExportFormat, Query, RecordView } from "../../bindings";
import { Badge, Dialog, EmptyState, ErrorBox, ProgressBar } from "../../components";
import { useFormat } from "../../i18n";
import { api, newJobId } from "../../ipc";
import { useAudit, useJumps, useNavigate, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import type { VirtualTableHandle } from "../../components/VirtualTable";
import { RecordTable } from "./RecordTable";
import { RecordDetail } from "./RecordDetail";
import { DAYS, VerdictBox, DaysChart } from "./TrailSummary";

const PAGE = 200;

function toIso(local: string, end: boolean): string | null {
  if (!local) return null;
  const d = new Date(local);
  if (Number.isNaN(d.getTime())) return null;
  if (end && local.length <= 10) d.setHours(23, 59, 59, 999);
  return d.toISOString();
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
    virtRef.current?.scrollToIndex(i, "center");
    // eslint-disable-next-line react-hooks/set-state-in-effect -- the record arrives with a page from the backend: selecting it then syncs with that answer, once (the target is cleared).
    setSelected(records[i]!);
    setTarget(null);
  }, [target, records]);
  const showBad = useCallback(
    (seq: number) => {
      const i = records?.findIndex((r) => r.seq === seq) ?? -1;
      if (i >= 0) virtRef.current?.scrollToIndex(i, "center");
    },
    [records],
  );
  const virtRef = useRef<VirtualTableHandle>(null);
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

  // Older pages load as the table nears its end, so 100,000 records scroll like one list.
  const [lastShown, setLastShown] = useState(0);
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
          <RecordTable
            records={records ?? []}
            badSeq={badSeq}
            selected={selected}
            onSelect={setSelected}
            onLastRendered={setLastShown}
            handle={virtRef}
            footer={
              more && (
                <button onClick={() => void older()} className="load-more">
                  {t("audit.load_older")}
                </button>
              )
            }
          />
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
