// The detail pane's key succession section for a signing key: choose its successor (another
// signing key on the partition) and the dates, then the console writes the statement where
// the officer says and has both keys sign it (the same as `hsmc keys succession`).
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { KeyDetails } from "../../bindings";
import { ErrorBox, Field } from "../../components";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";

export function KeySuccession({ partitionId, details }: { partitionId: string; details: KeyDetails }) {
  const { t } = useTranslation();
  const toast = useToast();
  const old = details.summary;
  const { run: loadKeys, data: keys } = useCommand(api.signingKeys);
  const [successor, setSuccessor] = useState("");
  const [from, setFrom] = useState("");
  const [until, setUntil] = useState("");
  const [confirmHss, setConfirmHss] = useState(false);
  useEffect(() => {
    void loadKeys(partitionId);
  }, [loadKeys, partitionId]);
  const candidates = (keys ?? []).filter((k) => k.id_hex !== old.id_hex || k.label !== old.label);
  const chosen = candidates.find((k) => `id:${k.id_hex}` === successor);
  const hss = old.algorithm === "HSS" || chosen?.algorithm === "HSS";
  const ordered = !from || !until || until >= from;
  const base = (old.label || old.id_hex || "key").replace(/[^A-Za-z0-9._-]/g, "_");
  const make = useCommand(async () => {
    const m = await api.saveKeySuccession(
      partitionId,
      `id:${old.id_hex}`,
      successor,
      from || null,
      until || null,
      confirmHss,
      `${base}-succession.json`,
    );
    if (m) toast("ok", t("key_succession.saved", { path: m.statement_path, old: m.statement.old.label, new: m.statement.new.label }));
    return m;
  });
  return (
    <section className="pubkey" data-testid="key-succession">
      <h3>{t("key_succession.title")}</h3>
      <p className="muted">{t("key_succession.explain")}</p>
      {candidates.length === 0 ? (
        <p className="muted" data-testid="succession-empty">
          {t("key_succession.no_successor")}
        </p>
      ) : (
        <>
          <Field label={t("key_succession.successor")}>
            <select value={successor} onChange={(e) => setSuccessor(e.target.value)} data-testid="succession-new">
              <option value="">{t("key_succession.choose")}</option>
              {candidates.map((k) => (
                <option key={k.id_hex + k.label} value={`id:${k.id_hex}`}>
                  {`${k.label} — ${k.algorithm}`}
                </option>
              ))}
            </select>
          </Field>
          <Field label={t("key_succession.from")} hint={t("key_succession.from_hint")}>
            <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} data-testid="succession-from" />
          </Field>
          <Field label={t("key_succession.until")} hint={ordered ? t("key_succession.until_hint") : t("key_succession.until_before_from")}>
            <input type="date" value={until} onChange={(e) => setUntil(e.target.value)} data-testid="succession-until" />
          </Field>
          {hss && (
            <label className="check">
              <input
                type="checkbox"
                checked={confirmHss}
                onChange={(e) => setConfirmHss(e.target.checked)}
                data-testid="succession-confirm-hss"
              />
              {t("key_succession.confirm_hss")}
            </label>
          )}
          <div className="button-row">
            <button
              onClick={() => void make.run()}
              disabled={!chosen || !ordered || (hss && !confirmHss) || make.loading}
              data-testid="succession-make"
            >
              {t("key_succession.make")}
            </button>
          </div>
        </>
      )}
      {make.error && <ErrorBox error={make.error} />}
    </section>
  );
}
