#include <amqp.h>
#include <amqp_tcp_socket.h>
