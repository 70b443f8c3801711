"""What an app server meets on notify.ingest, tried with pika (an AMQP client of its own, not ours).

Environment: NOTIFY_AMQP_URL (the app's broker credentials), NOTIFY_APP_ID, NOTIFY_USER_ID, NOTIFY_RETRY_KEY.
Prints one JSON object: for each case, what the broker or the service answered. With the argument "retry", publishes
only the keyed notification (NOTIFY_RETRY_KEY as message_id) again, as a publisher retrying it would.
"""
import json
import os
import sys
import uuid

import pika
from pika.exceptions import ChannelClosedByBroker

parameters = pika.URLParameters(os.environ["NOTIFY_AMQP_URL"])
user = parameters.credentials.username
app_id = os.environ["NOTIFY_APP_ID"]
user_id = os.environ["NOTIFY_USER_ID"]
connection = pika.BlockingConnection(parameters)
results = {}


def broker_refusal(action):
    """Runs action(channel); answers the broker's reply code if it closed the channel, else 0."""
    channel = connection.channel()
    channel.confirm_delivery()
    try:
        action(channel)
        channel.close()
        return 0
    except ChannelClosedByBroker as error:
        return error.reply_code


def properties(**overrides):
    values = dict(content_type="application/json", message_id=str(uuid.uuid4()), user_id=user, reply_to="amq.rabbitmq.reply-to",
                  correlation_id=str(uuid.uuid4()), delivery_mode=pika.DeliveryMode.Persistent)
    values.update(overrides)
    return pika.BasicProperties(**{key: value for key, value in values.items() if value is not None})


def verdict(body, **overrides):
    """Publishes body to notify.ingest with direct reply-to; answers {"status", "body"} (empty after 10 s)."""
    channel = connection.channel()
    channel.confirm_delivery()
    answer = {}

    def on_reply(ch, method, props, reply):
        answer["status"] = props.headers["x-notify-status"]
        # pika reads an AMQP long as its int subclass "long"
        answer["statusIsInteger"] = isinstance(props.headers["x-notify-status"], int)
        answer["body"] = json.loads(reply)
        ch.stop_consuming()

    channel.basic_consume("amq.rabbitmq.reply-to", on_reply, auto_ack=True)
    channel.basic_publish("notify.ingest", app_id, body, properties(**overrides), mandatory=True)
    connection.call_later(10, channel.stop_consuming)
    channel.start_consuming()
    channel.close()
    return answer


def alert(title, **fields):
    return json.dumps(dict({"userId": user_id, "payload": {"visualContent": {"title": title}}}, **fields))


retry_key = os.environ["NOTIFY_RETRY_KEY"]
if sys.argv[1:] == ["retry"]:
    print(json.dumps({"retrySecond": verdict(alert("retried"), message_id=retry_key)}))
    connection.close()
    sys.exit(0)

# The broker enforces the user's permissions: write notify.ingest only, queues named <user>.reply.* only.
results["defaultExchange"] = broker_refusal(lambda ch: ch.basic_publish("", "notify.ingest", alert("x"), properties()))
results["otherExchange"] = broker_refusal(lambda ch: ch.basic_publish("amq.topic", app_id, alert("x"), properties()))
results["foreignQueue"] = broker_refusal(lambda ch: ch.queue_declare("someone-else.reply.1", exclusive=True))
results["ownReplyQueue"] = broker_refusal(lambda ch: ch.queue_declare(user + ".reply.1", exclusive=True))
results["otherUserId"] = broker_refusal(
    lambda ch: ch.basic_publish("notify.ingest", app_id, alert("x"), properties(user_id="somebody-else")))

# The service's verdicts, on reply_to.
results["accepted"] = verdict(alert("accepted over pika"))
results["noMessageId"] = verdict(alert("no key"), message_id=None)
results["keyedByAppNotificationId"] = verdict(alert("keyed", appNotificationId="pika-" + str(uuid.uuid4())), message_id=None)
results["tooLarge"] = verdict(alert("x" * (2 << 20)))
results["badPriority"] = verdict(alert("bad priority", priority="urgent"))
results["notJSON"] = verdict("{not json")
results["retryFirst"] = verdict(alert("retried"), message_id=retry_key)
connection.close()
print(json.dumps(results))
