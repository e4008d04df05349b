// Modules and their slots: add a module, log in and out, pick the partition to work on.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { EmptyState, ErrorBox } from "../../components";
import { api } from "../../ipc";
import { useConnections, useConnectionsActions, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { ModuleCard } from "./ModuleCard";

/// Where Luna's client library usually is (an example path, the same in every language).
const LUNA_CLIENT = "/usr/safenet/lunaclient/lib/libCryptoki2_64.so";

function AddModule() {
  const { t } = useTranslation();
  const { refreshConnections } = useConnectionsActions();
  const toast = useToast();
  const [path, setPath] = useState("");
  const adding = useCommand(async (p: string) => {
    const m = await api.addModule(p);
    toast("ok", t("connections.added", { name: m.library_description || m.path }));
    setPath("");
    await refreshConnections();
  });
  const picking = useCommand(api.pickModuleFile);
  const busy = adding.loading;
  // One message for both: the latest failure, of the file dialog or of loading the module.
  const error = picking.error ?? adding.error;
  const add = async (p: string) => {
    picking.reset();
    await adding.run(p);
  };
  const browse = async () => {
    const p = await picking.run();
    if (p) {
      setPath(p);
      await adding.run(p);
    }
  };
  return (
    <section className="card">
      <h2>{t("connections.add_title")}</h2>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (path.trim()) void add(path.trim());
        }}
      >
        <input
          type="text"
          placeholder={LUNA_CLIENT}
          value={path}
          onChange={(e) => setPath(e.target.value)}
          aria-label={t("connections.module_path")}
          data-testid="module-path"
          spellCheck={false}
        />
        <button type="button" onClick={() => void browse()}>
          {t("connections.browse")}
        </button>
        <button type="submit" className="primary" disabled={busy || !path.trim()} data-testid="module-add">
          {busy ? t("connections.loading") : t("connections.add")}
        </button>
      </form>
      <p className="muted small">{t("connections.add_hint")}</p>
      {error && <ErrorBox error={error} title={t("connections.not_added")} />}
    </section>
  );
}

export function ConnectionsView() {
  const { t } = useTranslation();
  const { connections, connectionsLoaded } = useConnections();
  const { refreshConnections } = useConnectionsActions();
  return (
    <div className="view">
      <header className="view-header">
        <h1>{t("connections.title")}</h1>
        <button onClick={() => void refreshConnections()}>{t("overview.refresh")}</button>
      </header>
      {connectionsLoaded && connections.length === 0 && (
        <EmptyState title={t("connections.no_modules")}>{t("connections.no_modules_text")}</EmptyState>
      )}
      {connections.map((c) => (
        <ModuleCard key={c.module.id} conn={c} />
      ))}
      <AddModule />
    </div>
  );
}
