import { PageHeader } from "../../components/ui";

export default function Impressions() {
  return <PageHeader title="Impressions" />;
}
