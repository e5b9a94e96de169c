import { PageHeader } from "../../components/ui";

export default function SdkKeys() {
  return <PageHeader title="SdkKeys" />;
}
