"""The peer to beat: the Chainlit app of the field guide seed 002 (section 3.3), as a reader would write it.

Kept verbatim apart from where the guide hard-codes its server (address, key, model name), which come
from the environment so that the bench can point it at the replay upstream: a new `AsyncOpenAI` client
per message, an empty message sent first, one `stream_token` per token, `update()` at the end. No
login, no history, no retries: everything our app adds is absent, so it also costs nothing here.
"""

import os

import chainlit as cl
import openai

API_BASE_URL = os.environ.get("SEED_API_BASE_URL", "http://localhost:8000/v1")
API_KEY = os.environ.get("SEED_API_KEY", "your-secret-key")
MODEL = os.environ.get("SEED_MODEL", "ernie-4.5-0.3b-pt")


@cl.on_message
async def main(message: cl.Message) -> None:
    # 初始化OpenAI客户端，指向vLLM
    client = openai.AsyncOpenAI(
        base_url=API_BASE_URL,
        api_key=API_KEY,  # 必须和vLLM启动时的--api-key一致
    )
    try:
        # 发送请求，model名必须和--served-model-name完全一致
        stream = await client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": message.content}],
            stream=True,
        )
        # 流式响应处理
        response_message = cl.Message(content="")
        await response_message.send()
        async for part in stream:
            if token := part.choices[0].delta.content:
                await response_message.stream_token(token)
        await response_message.update()
    except Exception as e:
        await cl.Message(content=f"调用失败: {str(e)}").send()  # noqa: RUF010 - verbatim
