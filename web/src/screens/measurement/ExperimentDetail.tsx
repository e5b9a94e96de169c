import { PageHeader } from "../../components/ui";

export default function ExperimentDetail() {
  return <PageHeader title="ExperimentDetail" />;
}
