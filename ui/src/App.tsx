export function App() {
  return <h1>HSM Console</h1>;
}
