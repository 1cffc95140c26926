Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
5,ChatGPT,472,18,490,Conversation log
45,ChatGPT,1087,230,1317,Conversation log
118,GPT-4,417,276,693,Conversation log
185,ChatGPT,1360,647,2007,Conversation log
214,ChatGPT,185,215,400,Conversation log
