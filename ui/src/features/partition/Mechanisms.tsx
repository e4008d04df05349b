// The partition's mechanisms: each one's key sizes and flags, searchable.
import { useEffect, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { ErrorBox } from "../../components";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";

export function Mechanisms({ partitionId }: { partitionId: string }) {
  const { t } = useTranslation();
  const toast = useToast();
  const { run: loadList, data: list, error } = useCommand(api.mechanisms);
  const [q, setQ] = useState("");
  useEffect(() => {
    void loadList(partitionId);
  }, [loadList, partitionId]);
  const shown = useMemo(() => {
    const s = q.trim().toLowerCase();
    if (!list) return [];
    if (!s) return list;
    return list.filter(
      (m) =>
        (m.name ?? "").toLowerCase().includes(s) || m.hex.toLowerCase().includes(s) || m.flags.some((f) => f.toLowerCase().includes(s)),
    );
  }, [list, q]);
  const { run: exportCsv } = useCommand(
    async () => {
      const p = await api.saveMechanismsCsv(partitionId);
      if (p) toast("ok", t("common.saved", { path: p }));
    },
    { errorToast: t("common.export_failed") },
  );
  return (
    <section className="card">
      <header className="card-header">
        <h2>
          {t("partition.mechanisms")}{" "}
          {list && <span className="muted">{t("partition.shown_of", { shown: shown.length, total: list.length })}</span>}
        </h2>
        <div className="inline-form">
          <input
            type="search"
            placeholder={t("partition.filter_placeholder")}
            value={q}
            onChange={(e) => setQ(e.target.value)}
            aria-label={t("partition.filter_label")}
            data-testid="mechanism-filter"
          />
          <button onClick={() => void exportCsv()} disabled={!list}>
            {t("audit.export_csv")}
          </button>
        </div>
      </header>
      {error && <ErrorBox error={error} />}
      {list === null && !error && <p className="muted">{t("partition.reading")}</p>}
      {list && (
        <div className="scroll-box">
          <table className="table compact" data-testid="mechanism-table">
            <thead>
              <tr>
                <th>{t("partition.col_code")}</th>
                <th>{t("partition.col_name")}</th>
                <th>{t("partition.col_key_sizes")}</th>
                <th>{t("partition.col_flags")}</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((m) => (
                <tr key={m.code}>
                  <td>
                    <code>{m.hex}</code>
                  </td>
                  <td>{m.name ?? <span className="muted">{t("partition.vendor_defined")}</span>}</td>
                  <td>{m.min_key_size === 0 && m.max_key_size === 0 ? "—" : `${m.min_key_size} – ${m.max_key_size}`}</td>
                  <td className="flags">{m.info_error ? <span className="muted">{m.info_error}</span> : m.flags.join(" ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
