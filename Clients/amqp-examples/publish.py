"""Publish one notification to notify.ingest with pika, and wait for the service's verdict.

Environment: NOTIFY_AMQP_URL (the "url" of the app's broker credentials), NOTIFY_APP_ID, NOTIFY_USER_ID.
Prints {"status": 202, "body": {"id": "..."}} and exits 0 when accepted.
"""
import json
import os
import sys
import uuid

import pika

parameters = pika.URLParameters(os.environ["NOTIFY_AMQP_URL"])
connection = pika.BlockingConnection(parameters)
channel = connection.channel()
# With confirms, basic_publish returns once the broker has the message (durably) and raises if it refused it.
# The confirm is not acceptance: the service's verdict comes on reply_to.
channel.confirm_delivery()

verdict = {}


def on_reply(ch, method, properties, body):
    verdict["status"] = properties.headers["x-notify-status"]  # an integer: 202, 400, 403, 413, ...
    verdict["body"] = json.loads(body)
    ch.stop_consuming()


# Direct reply-to: nothing to declare; consume before publishing, on the same channel, without acks.
channel.basic_consume("amq.rabbitmq.reply-to", on_reply, auto_ack=True)

notification = {
    "userId": os.environ["NOTIFY_USER_ID"],
    "payload": {"visualContent": {"title": "Hello", "body": "from pika"}},
}
channel.basic_publish(
    exchange="notify.ingest",
    routing_key=os.environ["NOTIFY_APP_ID"],
    body=json.dumps(notification),
    properties=pika.BasicProperties(
        content_type="application/json",
        message_id=str(uuid.uuid4()),  # the idempotency key: publish a retry with the same one
        user_id=parameters.credentials.username,  # must be the connection's user
        reply_to="amq.rabbitmq.reply-to",
        correlation_id=str(uuid.uuid4()),
        delivery_mode=pika.DeliveryMode.Persistent,
    ),
    mandatory=True,
)
connection.call_later(10, channel.stop_consuming)
channel.start_consuming()
connection.close()
print(json.dumps(verdict))
sys.exit(0 if verdict.get("status") == 202 else 1)
