// Copyable start-up code for a newly created SDK key: the OpenFeature web SDK
// with the OFREP web provider for a client key (pk_live_…, published in the
// page), and for a server key (sk_live_…, kept in the service's environment)
// the Go SDK and the OpenFeature Node SDK with the OFREP provider. Versions
// are the ones the browser and Node tests pin (docs/ofrep.md).
export type SdkKind = "server" | "client";

export const WEB_PACKAGES = "@openfeature/web-sdk@1.10.0 @openfeature/ofrep-web-provider@0.4.3";
export const NODE_PACKAGES = "@openfeature/server-sdk@1.23.0 @openfeature/ofrep-provider@0.1.3";

export type Snippet = { id: string; title: string; language: string; code: string };

// baseUrl is the dashboard's own origin: the server that serves this page
// also answers /ofrep/v1 and /stream.
export function snippetsFor(kind: SdkKind, key: string, baseUrl: string): Snippet[] {
  const url = baseUrl;
  if (kind === "client") {
    return [
      {
        id: "web",
        title: "Browser (OpenFeature web SDK + OFREP)",
        language: "js",
        code: `// npm install ${WEB_PACKAGES}
import { OpenFeature } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';

await OpenFeature.setContext({ targetingKey: 'user-42', plan: 'pro' });
await OpenFeature.setProviderAndWait(new OFREPWebProvider({
  baseUrl: '${url}',
  headers: [['Authorization', 'Bearer ${key}']],
}));
const client = OpenFeature.getClient();
const on = client.getBooleanValue('my-flag', false); // only client-side flags
client.addHandler('PROVIDER_CONFIGURATION_CHANGED', render); // pushed on every change
`,
      },
    ];
  }
  return [
    {
      id: "go",
      title: "Go (Switchyard SDK)",
      language: "go",
      code: `// export SWITCHYARD_SDK_KEY=${key}   (keep it in your secret store)
// go get github.com/switchyard/switchyard/sdkgo
client, err := sdkgo.New(ctx, os.Getenv("SWITCHYARD_SDK_KEY"), sdkgo.WithBaseURL("${url}"))
if err != nil && !errors.Is(err, sdkgo.ErrNotReady) {
	log.Fatal(err) // not an SDK key
}
defer client.Close(context.Background())

on := client.Bool("my-flag", user.ID, map[string]any{"plan": user.Plan}, false)
`,
    },
    {
      id: "node",
      title: "Node.js (OpenFeature + OFREP)",
      language: "js",
      code: `// export SWITCHYARD_SDK_KEY=${key}   (keep it in your secret store)
// npm install ${NODE_PACKAGES}
import { OpenFeature } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';

await OpenFeature.setProviderAndWait(new OFREPProvider({
  baseUrl: '${url}',
  headers: [['Authorization', \`Bearer \${process.env.SWITCHYARD_SDK_KEY}\`]],
}));
const on = await OpenFeature.getClient().getBooleanValue('my-flag', false, { targetingKey: 'user-42', plan: 'pro' });
`,
    },
  ];
}
