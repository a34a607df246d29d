/**
 * The span attributes this project writes, by name (docs/operations.md#span-attributes): the
 * OpenTelemetry semantic conventions' names where one exists, `gitlab.*` for the rest. Nothing
 * here ever holds a token, a password, a key or a message body.
 */
export const ATTR = {
	correlationId: "correlation_id",
	httpMethod: "http.request.method",
	httpRoute: "http.route",
	httpStatus: "http.response.status_code",
	serverAddress: "server.address",
	serverPort: "server.port",
	urlPath: "url.path",
	rpcSystem: "rpc.system",
	rpcService: "rpc.service",
	rpcMethod: "rpc.method",
	callerNode: "moleculer.caller.node_id",
	errorType: "error.type",
	messagingSystem: "messaging.system",
	messagingOperation: "messaging.operation.type",
	messagingDestination: "messaging.destination.name",
	messagingGroup: "messaging.consumer.group.name",
	messagingMessageId: "messaging.message.id",
	messagingDeliveryCount: "messaging.delivery_count",
	project: "gitlab.project.id",
	pushEvent: "gitlab.push.event_id",
	deliveryOutcome: "gitlab.delivery.outcome",
	ircTarget: "irc.target",
	ircLines: "irc.lines",
	smtpRecipients: "smtp.recipients",
	smtpResponseCode: "smtp.response.code",
} as const;

/** What became of one outbound delivery: made, refused for good (not retried), or failed (retried later). */
export type DeliveryOutcome = "delivered" | "refused" | "failed";
