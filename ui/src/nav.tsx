// The views, in the sidebar's order: the one place a view is registered. Each entry gives
// its id (what `useNavigate` takes and "hsmc.view" remembers), its sidebar label (a catalog
// key under nav.*), its Alt+key shortcut and the component shown for it. The first is shown
// on a first start.
import type { ComponentType } from "react";
import type en from "../../locales/en.json";
import { VIEW_IDS, type View } from "./viewIds";
import { AuditView } from "./features/audit/Audit";
import { ConnectionsView } from "./features/connections/Connections";
import { HssView } from "./features/hss/Hss";
import { KeysView } from "./features/keys/Keys";
import { OverviewView } from "./features/overview/Overview";
import { PartitionViewPage } from "./features/partition/Partition";
import { PqcView } from "./features/pqc/Pqc";
import { ProbesView } from "./features/probes/Probes";
import { SettingsView } from "./features/settings/Settings";
import { SignView } from "./features/sign/Sign";
import { StatsView } from "./features/stats/Stats";
import { VerifyView } from "./features/verify/Verify";

export interface NavEntry {
  view: View;
  label: `nav.${keyof typeof en.nav}`;
  /// With Alt: Alt+1 … Alt+9, Alt+0 (the Overview has none: it is where the window opens; the
  /// PQC readiness view has none left: it is in the sidebar and behind the Overview's items).
  key: string | null;
  Component: ComponentType;
}

export const NAV = [
  { view: "overview", label: "nav.overview", key: null, Component: OverviewView },
  { view: "connections", label: "nav.connections", key: "1", Component: ConnectionsView },
  { view: "partition", label: "nav.partition", key: "2", Component: PartitionViewPage },
  { view: "keys", label: "nav.keys", key: "3", Component: KeysView },
  { view: "sign", label: "nav.sign", key: "4", Component: SignView },
  { view: "verify", label: "nav.verify", key: "5", Component: VerifyView },
  { view: "hss", label: "nav.hss", key: "6", Component: HssView },
  { view: "pqc", label: "nav.pqc", key: null, Component: PqcView },
  { view: "stats", label: "nav.stats", key: "7", Component: StatsView },
  { view: "probes", label: "nav.probes", key: "8", Component: ProbesView },
  { view: "audit", label: "nav.audit", key: "9", Component: AuditView },
  { view: "settings", label: "nav.settings", key: "0", Component: SettingsView },
] as const satisfies readonly NavEntry[];

export type { View };

/// The sidebar's order is the ids' order (checked when the module loads: a view added to
/// one list and not the other is a programming error).
export const VIEWS: readonly View[] = NAV.map((n) => n.view);
if (VIEWS.join() !== VIEW_IDS.join()) {
  throw new Error(`nav.tsx and viewIds.ts list different views: ${VIEWS.join()} / ${VIEW_IDS.join()}`);
}
