{{/* The chart's name, shortened to the 63 characters of a DNS label. */}}
{{- define "switchyard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's resource name: the release name, with the chart's name unless it already contains it. */}}
{{- define "switchyard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "switchyard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every resource. */}}
{{- define "switchyard.labels" -}}
helm.sh/chart: {{ include "switchyard.chart" . }}
{{ include "switchyard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the release's pods; never change them in an upgrade. */}}
{{- define "switchyard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchyard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "switchyard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "switchyard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret the pods read SESSION_SECRET, DATABASE_URL, REDIS_URL and the rest from. */}}
{{- define "switchyard.secretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else }}
{{- include "switchyard.fullname" . }}
{{- end }}
{{- end }}

{{/* Non-empty when /metrics requires METRICS_TOKEN from the release's Secret. */}}
{{- define "switchyard.metricsToken" -}}
{{- if .Values.existingSecret }}
{{- if .Values.metrics.tokenInExistingSecret }}true{{ end }}
{{- else if .Values.metrics.token }}true
{{- end }}
{{- end }}

{{- define "switchyard.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* PUBLIC_URL: config.publicURL, else the first Ingress host (https when it has TLS). */}}
{{- define "switchyard.publicURL" -}}
{{- if .Values.config.publicURL }}
{{- .Values.config.publicURL | trimSuffix "/" }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- $host := (first .Values.ingress.hosts).host }}
{{- printf "%s://%s" (ternary "https" "http" (gt (len .Values.ingress.tls) 0)) $host }}
{{- end }}
{{- end }}

{{/*
Checks the values the chart cannot run without, when it writes the Secret itself.
An existing Secret is the operator's to get right (NOTES.txt lists its keys).
*/}}
{{- define "switchyard.validate" -}}
{{- if eq (int .Values.metrics.port) 3000 }}
{{- fail "metrics.port must differ from 3000, the main port; 0 serves /metrics on the main port" }}
{{- end }}
{{- if and .Values.metrics.tokenInExistingSecret (not .Values.existingSecret) }}
{{- fail "metrics.tokenInExistingSecret needs existingSecret; set metrics.token instead" }}
{{- end }}
{{- if not .Values.existingSecret }}
{{- if lt (len .Values.sessionSecret) 32 }}
{{- fail "sessionSecret must be at least 32 characters (openssl rand -hex 32), or set existingSecret" }}
{{- end }}
{{- if not .Values.postgresql.url }}
{{- fail "postgresql.url (DATABASE_URL) is required, or set existingSecret" }}
{{- end }}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.redis.url) }}
{{- fail "redis.url (REDIS_URL) is required for more than one replica: Redis carries flag changes between instances" }}
{{- end }}
{{- if and .Values.admin.password (lt (len .Values.admin.password) 8) }}
{{- fail "admin.password must be at least 8 characters" }}
{{- end }}
{{- end }}
{{- end }}
