"""The families' agent loop, with tool definitions built once per episode.

inspect's own loop (``task_generate``, behind the ``generate`` a solver is handed) passes the
task's tools to ``execute_tools`` as `Tool` functions, which rebuilds a `ToolDef` of every
tool, copying its parameter schema, at every tool execution. `tool_loop` makes the same calls
through inspect's public API (the active model's ``generate`` with the tools as inspect's loop
passes them, and ``execute_tools`` with `ToolDef`s built once per episode): the same messages,
the same model and tool events, the same limits (inspect checks the message and token limits
inside ``generate`` and when messages are appended to the state; the time limit is the
sample's own), and the same seed and generation
config. What it saves is measured in docs/design/run-speed.md ("The families' agent loop").
"""

from __future__ import annotations

from inspect_ai.model import GenerateConfig, execute_tools, get_model
from inspect_ai.model._generate_config import active_generate_config
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolDef, ToolFunction

__all__ = ["tool_loop"]


async def tool_loop(state: TaskState, *, seed: int) -> TaskState:
    """Generate and run tool calls until the model answers without one (or the state completes).

    What ``await generate(state, tool_calls="loop", seed=seed)`` does in a solver, turn for
    turn: the model under test (the active model) is called with the conversation, the
    state's tools and its ``tool_choice`` (a forced tool becomes ``"auto"`` after its first
    call), under the task's generation config with ``seed``; every turn's message is appended
    to the state, its tool calls are run and their messages appended, and the loop stops when
    the model calls no tool or the state is completed (a limit, a tool that ends the episode).

    Args:
        state: The sample's state; its `tools` are the episode's action space.
        seed: This episode's seed (`evalsuite.run.episode_seed`).
    """
    model = get_model()
    # inspect's loop passes the task's generation config merged with the call's arguments;
    # within a sample that config is the active one (which the runner has seeded already)
    config = active_generate_config().merge(GenerateConfig(seed=seed))
    # the model gets the tools as inspect's loop gives them: for a `Tool` function inspect
    # reuses a parsed description (a `ToolDef` would have its parameter schema deep-copied at
    # every turn); `execute_tools` gets the `ToolDef`s, which it would otherwise rebuild
    tool_defs = [ToolDef(tool) for tool in state.tools]
    tool_choice = state.tool_choice
    while True:
        state.output = await model.generate(
            input=state.messages, tools=state.tools, tool_choice=tool_choice, config=config
        )
        message = state.output.message
        state.messages.append(message)
        if _completed(state) or not message.tool_calls:
            return state
        messages, output = await execute_tools(state.messages, tool_defs, config.max_tool_output)
        state.messages.extend(messages)
        if output is not None:
            state.output = output
        if _completed(state):
            return state
        if isinstance(tool_choice, ToolFunction):
            tool_choice = "auto"


def _completed(state: TaskState) -> bool:
    """``state.completed`` (a limit, or a tool that ended the episode), read afresh each time."""
    return state.completed
