import { PageHeader } from "../../components/ui";

export default function Segments() {
  return <PageHeader title="Segments" />;
}
