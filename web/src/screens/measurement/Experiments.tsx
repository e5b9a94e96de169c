import { PageHeader } from "../../components/ui";

export default function Experiments() {
  return <PageHeader title="Experiments" />;
}
