import { PageHeader } from "../../components/ui";

export default function EnvSettings() {
  return <PageHeader title="EnvSettings" />;
}
