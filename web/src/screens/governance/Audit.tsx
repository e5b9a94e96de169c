import { PageHeader } from "../../components/ui";

export default function Audit() {
  return <PageHeader title="Audit" />;
}
