#!/bin/sh
# Answers the handshake with a protocol version dwarfcheck does not speak.
read -r hello
echo '{"protocol":"dwarfcheck/0","type":"hello","name":"old","supports":{"editions":["dwarf5"],"expr":true}}'
