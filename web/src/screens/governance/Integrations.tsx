import { PageHeader } from "../../components/ui";

export default function Integrations() {
  return <PageHeader title="Integrations" />;
}
