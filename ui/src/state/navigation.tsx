// Which view the window shows, remembered across runs ("hsmc.view"). The views themselves
// are registered in one table (../nav.tsx); this only holds the choice. `useNavigate` is
// stable, so a component that only navigates does not re-render when the view changes.
import { useCallback, useState, type ReactNode } from "react";
import type { View } from "../viewIds";
import { createSlice } from "./context";
import { remember, remembered } from "./storage";

const KEY = "hsmc.view";

const [CurrentView, useView] = createSlice<View>("useView");
const [Navigate, useNavigate] = createSlice<(v: View) => void>("useNavigate");
export { useNavigate, useView };

/// `views` are the registered views; the first is shown when none (or a view that no longer
/// exists) is remembered.
export function NavigationProvider({ views, children }: { views: readonly View[]; children: ReactNode }) {
  const [view, setView] = useState<View>(() => {
    const stored = remembered(KEY);
    return views.find((v) => v === stored) ?? views[0]!;
  });
  const navigate = useCallback((v: View) => {
    setView(v);
    remember(KEY, v);
  }, []);
  return (
    <Navigate value={navigate}>
      <CurrentView value={view}>{children}</CurrentView>
    </Navigate>
  );
}
