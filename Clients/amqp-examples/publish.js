// Publish one notification to notify.ingest with amqplib (npm install amqplib), and wait for the verdict.
// Environment: NOTIFY_AMQP_URL (the "url" of the app's broker credentials), NOTIFY_APP_ID, NOTIFY_USER_ID.
const amqp = require("amqplib");
const { randomUUID } = require("crypto");

async function main() {
  const url = new URL(process.env.NOTIFY_AMQP_URL);
  const connection = await amqp.connect(process.env.NOTIFY_AMQP_URL);
  const channel = await connection.createConfirmChannel(); // publish callbacks fire on the broker's confirm
  const verdict = new Promise((resolve) => {
    // Direct reply-to: consume before publishing, on the same channel, without acks.
    channel.consume("amq.rabbitmq.reply-to", (message) => {
      resolve({ status: message.properties.headers["x-notify-status"], body: JSON.parse(message.content) });
    }, { noAck: true });
  });
  const notification = {
    userId: process.env.NOTIFY_USER_ID,
    payload: { visualContent: { title: "Hello", body: "from amqplib" } },
  };
  await new Promise((resolve, reject) =>
    channel.publish("notify.ingest", process.env.NOTIFY_APP_ID, Buffer.from(JSON.stringify(notification)), {
      contentType: "application/json",
      messageId: randomUUID(), // the idempotency key: publish a retry with the same one
      userId: decodeURIComponent(url.username), // must be the connection's user
      replyTo: "amq.rabbitmq.reply-to",
      correlationId: randomUUID(),
      persistent: true,
      mandatory: true,
    }, (error) => (error ? reject(error) : resolve())));
  const answer = await Promise.race([verdict, new Promise((resolve) => setTimeout(() => resolve({}), 10000))]);
  console.log(JSON.stringify(answer));
  await connection.close();
  process.exit(answer.status === 202 ? 0 : 1);
}

main();
