import { PageHeader } from "../../components/ui";

export default function Schedules() {
  return <PageHeader title="Schedules" />;
}
